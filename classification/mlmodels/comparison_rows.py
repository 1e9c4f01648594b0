"""The rows a comparison scores models on, with each model's per-row decisions.

Training keeps a model's test metrics, not its per-row predictions, so these are made on demand:
each model is loaded (the per-process classifier cache) and predicts the rows, and its
decisions are cached under the model's artifact and the rows' file (a dataset's rows file and
a kept evaluation file are never rewritten, so a key never goes stale). Two sources of rows:

- the test split the models share: all trained on the same dataset, so the same rows in the
  same order (comparison_test_rows);
- a labelled file every model was evaluated on: one finished evaluation of each, whose file is
  still kept (evaluation_jobs.KEEP_INPUT_SECONDS), read with that evaluation's columns
  (comparison_evaluation_rows).

Every model must share one label space, or per-label scores would not be about the same thing.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from django.core.cache import cache

from classification.engine.metrics import encode_labels
from classification.mlmodels.evaluation_model import EvaluationJob
from classification.models import MLModel

CACHE_SECONDS = 7 * 24 * 3600
MIN_MODELS = 2


@dataclass(frozen=True)
class ComparedRows:
    """The rows every model is scored on: `truth` and each of `preds` rows x labels 0/1, in the
    same row order; `basis` says in words which rows they are."""

    truth: np.ndarray
    preds: list[np.ndarray]
    label_names: list[str]
    multi_label: bool
    basis: str


def _label_space(models: Sequence[MLModel]) -> tuple[list[str], bool]:
    if len(models) < MIN_MODELS:
        raise ValueError(f"Choose at least {MIN_MODELS} models to compare.")
    untrained = [m.name for m in models if not m.is_trained]
    if untrained:
        raise ValueError(f"“{untrained[0]}” is not trained: it has no predictions to compare.")
    spaces = {(tuple(_label_names(m)), bool(m.is_multilabel)) for m in models}
    if len(spaces) > 1:
        raise ValueError("These models do not share one set of labels (or one is multi-label "
                         "and another is not): their scores are not about the same thing.")
    names, multi_label = spaces.pop()
    return list(names), multi_label


def _label_names(ml_model: MLModel) -> list[str]:
    if ml_model.label_names:
        return list(ml_model.label_names)
    from classification.selectors import mlmodel_manifest

    return list(mlmodel_manifest(ml_model=ml_model).get("label_names") or [])


def _decisions(*, ml_model: MLModel, texts: list[str], label_names: list[str],
               cache_key: str) -> np.ndarray:
    """rows x labels 0/1: the labels the model gives each text (its own decision rules)."""
    from classification.mlmodels.prediction import mlmodel_predict

    key = f"compare:decisions:v1:{ml_model.pk}:{ml_model.artifact_path}:{cache_key}"
    shape = (len(texts), len(label_names))
    cached = cache.get(key)
    if isinstance(cached, dict) and cached.get("shape") == list(shape):
        return _unpacked(cached["bits"], shape)
    given = [row["labels"] for row in mlmodel_predict(ml_model=ml_model, texts=texts)]
    decisions = encode_labels(given, label_names).astype(np.int8)
    # The cache holds JSON only (core/cachejson.py): the 0/1 matrix travels as packed bits.
    bits = base64.b64encode(np.packbits(decisions.astype(np.uint8).ravel())).decode("ascii")
    cache.set(key, {"shape": list(shape), "bits": bits}, timeout=CACHE_SECONDS)
    return decisions


def _unpacked(bits: str, shape: tuple[int, int]) -> np.ndarray:
    flat = np.unpackbits(np.frombuffer(base64.b64decode(bits), dtype=np.uint8))
    return flat[: shape[0] * shape[1]].reshape(shape).astype(np.int8)


def _scorable(labels: list[list[str]], *, label_names: list[str],
              multi_label: bool) -> list[int]:
    """The rows a metric counts, as the models' own metrics count them: every row of a
    multi-label task (one without a label is right when none is given), a single-label task's
    rows that have a class of the label space."""
    if multi_label:
        return list(range(len(labels)))
    known = set(label_names)
    return [i for i, row in enumerate(labels) if row and row[0] in known]


def comparison_test_rows(*, models: Sequence[MLModel]) -> ComparedRows:
    """The models' shared test split; ValueError when they do not share one."""
    from classification.jobs.training_metadata import split_metadata
    from classification.mlmodels.prediction import mlmodel_texts
    from dataset_management.selectors import dataset_split_examples

    label_names, multi_label = _label_space(models)
    sources = {(m.dataset_id, m.dataset.rows_path if m.dataset else "") for m in models}
    if len(sources) > 1:
        raise ValueError("These models were trained on different datasets, so their test "
                         "splits are not the same rows: compare them on a file they were all "
                         "evaluated on.")
    dataset = models[0].dataset
    if dataset is None or not dataset.rows_path:
        raise ValueError("These models' dataset is gone: there is no test split to compare "
                         "them on.")
    split = dataset_split_examples(dataset=dataset, split="test")
    keep = _scorable(split.labels, label_names=label_names, multi_label=multi_label)
    if len(keep) < 2:
        raise ValueError(f"The test split of “{dataset.name}” has {len(keep)} rows to score: "
                         "too few to compare on.")
    metadata = split_metadata(dataset=dataset, split="test", rows=len(split))
    texts = [split.texts[i] for i in keep]
    metas = [metadata[i] for i in keep]
    preds = [_decisions(ml_model=m, texts=mlmodel_texts(ml_model=m, texts=texts, metadata=metas),
                        label_names=label_names, cache_key=f"test:{dataset.rows_path}")
             for m in models]
    truth = encode_labels([split.labels[i] for i in keep], label_names)
    return ComparedRows(truth=truth, preds=preds, label_names=label_names,
                        multi_label=multi_label,
                        basis=f"the {len(keep)} test rows of “{dataset.name}”")


def evaluation_file_digest(*, job: EvaluationJob) -> str | None:
    """sha256 of the evaluation's kept file; None once it is removed."""
    if not job.input_path:
        return None
    key = f"compare:evaluation-file:v1:{job.input_path}"
    if (cached := cache.get(key)) is not None:
        return cached
    from core import filestore

    try:
        source = Path(filestore.file_local(name=job.input_path))
        digest = hashlib.sha256()
        with source.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    except (OSError, ValueError):
        return None
    cache.set(key, digest.hexdigest(), timeout=CACHE_SECONDS)
    return digest.hexdigest()


def comparison_evaluation_files(*, models: Sequence[MLModel],
                                jobs: Sequence[EvaluationJob]) -> list[dict[str, Any]]:
    """The files every model has a finished evaluation of, still kept: per file its digest,
    name and each model's newest such evaluation ({model id: job}), newest file first."""
    wanted = {m.pk for m in models}
    files: dict[str, dict[str, Any]] = {}
    for job in sorted(jobs, key=lambda j: j.created_at, reverse=True):
        if job.status != EvaluationJob.Status.COMPLETED or job.ml_model_id not in wanted:
            continue
        digest = evaluation_file_digest(job=job)
        if digest is None:
            continue
        entry = files.setdefault(digest, {"digest": digest, "filename": job.filename, "jobs": {}})
        entry["jobs"].setdefault(job.ml_model_id, job)
    return [entry for entry in files.values() if set(entry["jobs"]) == wanted]


def _file_rows(job: EvaluationJob, *, label_names: list[str],
               multi_label: bool) -> tuple[list[str], list[list[str]], list[Any]]:
    """The file's scorable rows as `job` read them: texts, labels of the label space, metadata."""
    from classification.mlmodels.evaluation import mlmodel_evaluation_columns
    from classification.mlmodels.prediction import parse_articles_file
    from core import filestore
    from dataset_management.unlabelled import NONE_LABELS

    source = filestore.file_local(name=job.input_path)
    columns = mlmodel_evaluation_columns(ml_model=job.ml_model, path=source,
                                         filename=job.filename, overrides=job.overrides)
    parsed = parse_articles_file(source, filename=columns.filename, mapping=columns.mapping)
    known = set(label_names)
    texts, labels, metas = [], [], []
    for i, row in enumerate(parsed.labels):
        row = [label for label in row if not multi_label or label not in NONE_LABELS]
        kept = [label for label in row if label in known]
        if kept or (multi_label and not row):
            texts.append(parsed.texts[i])
            labels.append(kept)
            metas.append(parsed.metadata[i] if parsed.metadata else None)
    return texts, labels, metas


def comparison_evaluation_rows(*, models: Sequence[MLModel],
                               jobs: dict[int, EvaluationJob]) -> ComparedRows:
    """The file of `jobs` (one finished evaluation per model, {model id: job}); ValueError when
    they are not all finished, of one kept file, or read it into different rows."""
    from classification.mlmodels.prediction import mlmodel_texts

    label_names, multi_label = _label_space(models)
    missing = [m.name for m in models if m.pk not in jobs]
    if missing:
        raise ValueError(f"“{missing[0]}” has no finished evaluation of this file.")
    chosen = [jobs[m.pk] for m in models]
    if any(job.status != EvaluationJob.Status.COMPLETED for job in chosen):
        raise ValueError("Not every evaluation of this file has finished yet.")
    digests = {evaluation_file_digest(job=job) for job in chosen}
    if None in digests:
        raise ValueError("The file of one of these evaluations is no longer kept: evaluate the "
                         "models on it again to compare them.")
    if len(digests) > 1:
        raise ValueError("These evaluations are of different files: they scored other rows.")
    digest = digests.pop()
    read = [_file_rows(job, label_names=label_names, multi_label=multi_label) for job in chosen]
    if any(texts != read[0][0] or labels != read[0][1] for texts, labels, _ in read[1:]):
        raise ValueError("These evaluations read the file's columns differently, so they "
                         "scored other rows: evaluate them with the same columns.")
    texts, labels, _ = read[0]
    if len(texts) < 2:
        raise ValueError(f"The file has {len(texts)} rows to score: too few to compare on.")
    preds = [
        _decisions(ml_model=m, texts=mlmodel_texts(ml_model=m, texts=texts, metadata=metas
                                                    if any(metas) else None),
                   label_names=label_names,
                   cache_key=f"file:{digest}:{json.dumps(job.overrides, sort_keys=True)}")
        for m, job, (_, _, metas) in zip(models, chosen, read, strict=True)
    ]
    return ComparedRows(truth=encode_labels(labels, label_names), preds=preds,
                        label_names=label_names, multi_label=multi_label,
                        basis=f"the {len(texts)} rows of “{chosen[0].filename}”")
