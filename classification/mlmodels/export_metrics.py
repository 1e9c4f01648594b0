"""95% bootstrap intervals of a model's test metrics, for its model card.

Per-row test predictions are not stored, so the model scores its dataset's test split again
when it is exported. The intervals are given only when that rescoring reproduces the stored
point metrics: a test split that changed since (or a model measured on validation only) gets
"intervals unavailable" with the reason, never intervals of other rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from classification.engine.ensemble_score import bootstrap_counts
from classification.engine.metrics import encode_labels, macro_f1_of_counts
from classification.models import MLModel

ROUNDS = 1000
# Rescoring runs while the download waits: more test rows than this are not rescored.
MAX_ROWS = {"skops": 20_000, "transformers": 2_000}
TOLERANCE = 1e-6


def _unavailable(reason: str) -> dict[str, Any]:
    return {"available": False, "reason": reason}


def _test_texts(*, ml_model: MLModel, clf: Any) -> tuple[list[str], list[list[str]]]:
    """The test split's texts as the model read them at training, and their labels."""
    from dataset_management.selectors import dataset_split_examples

    test = clf.scorable(dataset_split_examples(dataset=ml_model.dataset, split="test"))
    fields = list(getattr(clf.config, "metadata_used", None) or [])
    if not fields:
        return test.texts, test.labels
    from classification.engine.metadata import texts_with_metadata
    from classification.jobs.training_metadata import split_metadata

    everything = dataset_split_examples(dataset=ml_model.dataset, split="test")
    rows = split_metadata(dataset=ml_model.dataset, split="test", rows=len(everything))
    kept = [i for i, labels in enumerate(everything.labels) if clf.multi_label or labels]
    texts = texts_with_metadata(test.texts, [rows[i] for i in kept], fields=fields,
                                style=clf.config.metadata_style)
    return texts, test.labels


def bootstrap_intervals(*, truth: np.ndarray, pred: np.ndarray, multi_label: bool,
                        rounds: int = ROUNDS, seed: int = 0) -> dict[str, dict[str, float]]:
    """Per metric, its value on the rows and the 2.5th and 97.5th percentiles over `rounds`
    resamples of them (rows drawn with replacement); truth and pred are (n, L) 0/1."""
    counts = bootstrap_counts(len(truth), rounds=rounds, seed=seed)
    hits = pred * truth

    def scores(weights: np.ndarray) -> dict[str, np.ndarray]:
        tp, predicted, actual = weights @ hits, weights @ pred, weights @ truth
        exact = weights @ (pred == truth).all(axis=1) / len(truth)
        micro = 2 * tp.sum(axis=-1) / np.maximum(predicted.sum(axis=-1) + actual.sum(axis=-1), 1)
        return {"micro_f1": micro,
                "macro_f1": macro_f1_of_counts(tp=tp, predicted=predicted, actual=actual),
                "subset_accuracy" if multi_label else "accuracy": exact}

    point = scores(np.ones(len(truth)))
    spread = scores(counts)
    return {name: {"value": float(point[name]),
                   "low": float(np.percentile(spread[name], 2.5)),
                   "high": float(np.percentile(spread[name], 97.5))} for name in point}


def test_intervals(*, ml_model: MLModel, clf: Any) -> dict[str, Any]:
    """{"available": True, "rows", "rounds", "metrics": bootstrap_intervals} or {"available":
    False, "reason"}."""
    stored = ml_model.metrics or {}
    if stored.get("evaluated_on") != "test":
        return _unavailable("the stored metrics are validation's: the model has no test rows")
    if ml_model.dataset is None:
        return _unavailable("the dataset it was trained on was deleted, so its test rows "
                            "cannot be scored again")
    backend = "transformers" if hasattr(clf, "tokenizer") else "skops"
    texts, labels = _test_texts(ml_model=ml_model, clf=clf)
    if not texts:
        return _unavailable("the test split has no scorable row")
    if len(texts) > MAX_ROWS[backend]:
        return _unavailable(f"{len(texts)} test rows are more than the {MAX_ROWS[backend]} "
                            f"scored again while an export is built")
    given = [row["labels"] for row in clf.predict(texts)]
    pred = encode_labels(given, clf.label_names)
    truth = encode_labels(labels, clf.label_names)
    found = bootstrap_intervals(truth=truth, pred=pred, multi_label=clf.multi_label)
    for name, figures in found.items():
        if name in stored and abs(float(stored[name]) - figures["value"]) > TOLERANCE:
            return _unavailable(f"scored again, the test split gives {name} "
                                f"{figures['value']:.4f} where {float(stored[name]):.4f} was "
                                f"measured: its rows changed since training")
    return {"available": True, "rows": len(texts), "rounds": ROUNDS, "metrics": found}
