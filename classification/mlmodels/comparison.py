"""Comparing models on the same rows: each metric with a bootstrap interval, and a paired test
between each model and the best.

The rows are resampled with replacement ROUNDS times (engine/ensemble_score.bootstrap_counts,
the resampling the search's paired_error uses), and every metric of every model is scored on
every resample at once: per-label counts are `counts @ per_row`, so a resample costs one matrix
product, not a loop. All models are scored on the same resamples, so a difference between two is
paired: the rows both get right or wrong alike add no noise to it. An interval is the percentile
interval of the resampled scores; a difference's p-value is twice the share of resamples on its
less likely side of 0. For single-label models, McNemar's exact test on per-row correctness is
given as well: it asks only whether the rows one model alone gets right outnumber the other's.

The rows come from comparison_rows (a shared test split, or an evaluation file that every model
was evaluated on).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from classification.engine.ensemble_score import bootstrap_counts
from classification.engine.metrics import macro_f1_of_counts
from classification.mlmodels.comparison_rows import (
    ComparedRows,
    comparison_evaluation_files,
    comparison_evaluation_rows,
    comparison_test_rows,
)
from classification.mlmodels.evaluation_model import EvaluationJob
from classification.mlmodels.evaluation_selectors import evaluation_job_list, evaluation_job_uuid
from classification.models import MLModel
from dataset_management.readers import DatasetFileError

ROUNDS = 1000
SEED = 0
LEVEL = 0.95
# Which model is "the best" that the others are tested against.
RANKED_BY = "macro_f1"
# The headline metrics, by task shape, in the order the page shows them.
SINGLE_LABEL = (("accuracy", "Accuracy"), ("macro_f1", "Macro-F1"), ("micro_f1", "Micro-F1"))
MULTI_LABEL = (("micro_f1", "Micro-F1"), ("macro_f1", "Macro-F1"),
               ("subset_accuracy", "Subset accuracy"))
# What refusing to compare raises: rows the models cannot all be compared on, or an unreadable
# file. The page says it; the API answers 400 with it.
COMPARE_ERRORS = (ValueError, DatasetFileError, OSError)


def _scores(weights: np.ndarray, truth: np.ndarray, preds: list[np.ndarray], *,
            multi_label: bool, label_names: list[str]) -> list[dict[str, np.ndarray]]:
    """Every metric of each of `preds`, one score per row of `weights` (how often each row
    counts). The per-row columns every metric needs (the truth, and per model its hits, its
    labels given and whether the row is right) are counted in one product with `weights`."""
    labels = truth.shape[1]
    columns = [truth]
    for pred in preds:
        right = (pred == truth).all(axis=1) if multi_label else (pred * truth).sum(axis=1)
        columns += [pred * truth, pred, right[:, None].astype(truth.dtype)]
    counts = weights @ np.hstack(columns)
    actual, total = counts[:, :labels], np.maximum(weights.sum(axis=1), 1.0)
    out = []
    for k in range(len(preds)):
        base = labels + k * (2 * labels + 1)
        tp, predicted = counts[:, base:base + labels], counts[:, base + labels:base + 2 * labels]
        # Single-label: one true and one given class per row, so micro-F1 is the accuracy.
        scores = {"subset_accuracy" if multi_label else "accuracy":
                  counts[:, base + 2 * labels] / total}
        denom = predicted.sum(axis=1) + actual.sum(axis=1)
        scores["micro_f1"] = np.where(denom > 0, 2 * tp.sum(axis=1) / np.maximum(denom, 1), 0.0)
        scores["macro_f1"] = macro_f1_of_counts(tp=tp, predicted=predicted, actual=actual)
        label_denom = predicted + actual
        per_label = np.where(label_denom > 0, 2 * tp / np.maximum(label_denom, 1), 0.0)
        scores.update({f"f1:{name}": per_label[:, j] for j, name in enumerate(label_names)})
        out.append(scores)
    return out


def _interval(values: np.ndarray) -> tuple[float, float]:
    tail = 100 * (1 - LEVEL) / 2
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap_p_value(differences: np.ndarray) -> float:
    """Two-sided: twice the share of resamples on the difference's less likely side of 0, each
    side counted with one more (so never 0 from a finite number of resamples)."""
    rounds = len(differences)
    below = (1 + int((differences <= 0).sum())) / (rounds + 1)
    above = (1 + int((differences >= 0).sum())) / (rounds + 1)
    return float(min(1.0, 2 * min(below, above)))


def mcnemar_exact(*, first_correct: np.ndarray, second_correct: np.ndarray) -> dict[str, Any]:
    """McNemar's exact test: of the rows exactly one model gets right, whether either model's
    share differs from one half (binomial, two-sided)."""
    from scipy.stats import binom

    first_only = int((first_correct & ~second_correct).sum())
    second_only = int((second_correct & ~first_correct).sum())
    discordant = first_only + second_only
    p = 1.0 if not discordant else float(min(1.0, 2 * binom.cdf(min(first_only, second_only),
                                                                 discordant, 0.5)))
    return {"first_only_right": first_only, "second_only_right": second_only, "p_value": p}


def metric_names(*, multi_label: bool, label_names: list[str]) -> list[tuple[str, str]]:
    """(key, label) of every metric a comparison gives: the headline ones, then F1 per label."""
    headline = MULTI_LABEL if multi_label else SINGLE_LABEL
    return [*headline, *((f"f1:{name}", f"F1 · {name}") for name in label_names)]


def comparison_figures(*, rows: ComparedRows, models: list[dict[str, Any]],
                       rounds: int = ROUNDS, seed: int = SEED) -> dict[str, Any]:
    """The comparison of `models` ({"id", "name"} each, in the order of rows.preds): each
    metric's point value and interval, the best model by RANKED_BY, and each other model's
    paired difference from it per headline metric (interval, p-value, and whether the interval
    includes 0), with McNemar's test for single-label models."""
    truth = np.asarray(rows.truth, dtype=np.float32)
    n = len(truth)
    if n < 2:
        raise ValueError(f"There are {n} rows to compare these models on: at least 2 are needed.")
    weights = bootstrap_counts(n, rounds=rounds, seed=seed).astype(np.float32)
    ones = np.ones((1, n), dtype=np.float32)
    shape = {"multi_label": rows.multi_label, "label_names": rows.label_names}
    preds = [np.asarray(p, dtype=np.float32) for p in rows.preds]
    points = _scores(ones.astype(np.float64), truth.astype(np.float64),
                     [p.astype(np.float64) for p in preds], **shape)
    resampled = _scores(weights, truth, preds, **shape)
    names = metric_names(multi_label=rows.multi_label, label_names=rows.label_names)
    out_models = [
        {**model, "metrics": {key: {"value": float(point[key][0]),
                                    **dict(zip(("low", "high"), _interval(scores[key]),
                                               strict=True))}
                              for key, _ in names}}
        for model, point, scores in zip(models, points, resampled, strict=True)
    ]
    best = max(range(len(models)), key=lambda i: (points[i][RANKED_BY][0], -i))
    headline = names[:3]
    differences = []
    for i, model in enumerate(models):
        if i == best:
            continue
        for key, label in headline:
            diff = resampled[best][key] - resampled[i][key]
            low, high = _interval(diff)
            differences.append({
                "id": model["id"], "name": model["name"], "metric": key, "metric_label": label,
                "difference": float(points[best][key][0] - points[i][key][0]),
                "low": low, "high": high, "p_value": bootstrap_p_value(diff),
                "distinguishable": not low <= 0 <= high,
            })
    return {
        "rows": n, "basis": rows.basis, "rounds": rounds, "seed": seed, "level": LEVEL,
        "multi_label": rows.multi_label,
        "metrics": [{"key": key, "label": label} for key, label in names],
        "models": out_models,
        "best": {"id": models[best]["id"], "name": models[best]["name"], "by": RANKED_BY},
        "differences": differences,
        "mcnemar": [] if rows.multi_label else _mcnemar_rows(rows, models, best),
    }


def _mcnemar_rows(rows: ComparedRows, models: list[dict[str, Any]],
                  best: int) -> list[dict[str, Any]]:
    correct = [(np.asarray(p) * rows.truth).sum(axis=1) > 0 for p in rows.preds]
    return [
        {"id": model["id"], "name": model["name"],
         **mcnemar_exact(first_correct=correct[best], second_correct=correct[i])}
        for i, model in enumerate(models) if i != best
    ]


TEST = "test"
EVALUATION = "evaluation:"


def comparison_evaluation_jobs(*, user: Any, models: list[MLModel],
                               ref: str) -> dict[int, EvaluationJob]:
    """{model id: evaluation} for `ref`: a file's sha256 (each model's newest finished
    evaluation of it) or evaluation ids separated by commas, one per model, all in the user's
    projects. ValueError naming what does not fit."""
    jobs = evaluation_job_list(user=user).filter(ml_model__in=models)
    ref = ref.strip().lower()
    if len(ref) == 64 and all(c in "0123456789abcdef" for c in ref):
        files = comparison_evaluation_files(
            models=models, jobs=jobs.filter(status=EvaluationJob.Status.COMPLETED))
        found = next((f for f in files if f["digest"] == ref), None)
        if found is None:
            raise ValueError("Not every one of these models has a finished evaluation of that "
                             "file that is still kept.")
        return found["jobs"]
    ids = [evaluation_job_uuid(part.strip()) for part in ref.split(",") if part.strip()]
    if not ids or None in ids:
        raise ValueError("After evaluation: give a file's sha256 or evaluation ids (32 hex "
                         "characters each) separated by commas.")
    chosen = {job.pk: job for job in jobs.filter(pk__in=ids)}
    if len(chosen) != len(set(ids)):
        raise ValueError("One of those evaluations is not of these models, or not in your "
                         "projects.")
    by_model = {job.ml_model_id: job for job in chosen.values()}
    if len(by_model) != len(chosen):
        raise ValueError("Give one evaluation per model.")
    return by_model


def mlmodel_comparison(*, user: Any, models: list[MLModel], on: str = TEST) -> dict[str, Any]:
    """comparison_figures for `models` on `on`: "test" (their shared test split) or
    "evaluation:<sha256 of a file, or evaluation ids>". ValueError when there are no rows they
    were all scored on."""
    if on == TEST:
        rows = comparison_test_rows(models=models)
    elif on.startswith(EVALUATION):
        jobs = comparison_evaluation_jobs(user=user, models=models, ref=on[len(EVALUATION):])
        rows = comparison_evaluation_rows(models=models, jobs=jobs)
    else:
        raise ValueError(f"on is “{TEST}” or “{EVALUATION}<file sha256 or evaluation ids>”, "
                         f"not “{on}”.")
    figures = comparison_figures(rows=rows, models=[{"id": m.pk, "name": m.name} for m in models])
    return {"on": on, **figures}
