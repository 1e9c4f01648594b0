"""Prediction with a trained model, and reading labelled files for it and for evaluation
(classification/mlmodels/evaluation_scoring.py scores a file).

Files are parsed by the ingestion readers (every format import accepts), without saving a
Dataset. The classifier is cached per process by ml_models.get_cached_classifier.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from classification import ml_models
from classification.engine.metadata import metadata_extract, texts_with_metadata
from classification.models import MLModel
from classification.selectors import mlmodel_artifact_dir

if TYPE_CHECKING:
    from dataset_management.mapping import ColumnMapping


@dataclass
class ParsedFile:
    texts: list[str]
    labels: list[list[str]]  # [] per row when the file has no label column
    has_labels: bool
    dropped: int
    # Each row's metadata fields (journal, mesh, ...: engine/metadata.py), aligned with texts.
    metadata: list[dict[str, list[str]]] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)  # each text's row in the file
    problems: list[tuple[int, str]] = field(default_factory=list)  # (row, why) of the dropped


def article_metadata(article: Any) -> dict[str, list[str]]:
    """The metadata fields an article of dataset_management.articles has (any format)."""
    return metadata_extract(citation=article.citation, record=article.record)


def _cell(value: Any) -> str:
    return "" if value is None else str(value).strip()


def parse_articles_file(
    path: str | Path, *, filename: str | None = None, mapping: ColumnMapping | None = None
) -> ParsedFile:
    """Any file ingestion accepts -> texts (title + blank line + abstract) and labels, read by
    dataset_management.articles (the batches' and import's reader too). `mapping` overrides the
    detected columns."""
    from dataset_management.articles import articles_read
    from dataset_management.mapping import label_separator_detect, labels_parse

    path = Path(path)
    texts: list[str] = []
    raw_labels: list[Any] = []
    metadata: list[dict[str, list[str]]] = []
    rows: list[int] = []
    problems: list[tuple[int, str]] = []
    with articles_read(path=path, filename=filename or path.name, mapping=mapping) as articles:
        m = articles.mapping
        for article in articles:
            if article.problem:
                problems.append((article.row, article.problem))
                continue
            rows.append(article.row)
            texts.append(article.text)
            raw_labels.append(article.raw_labels)
            metadata.append(article_metadata(article))
    if not texts:
        raise ValueError(f"No article text found in {filename or path.name}")
    has_labels = bool(m.label) and any(
        v if isinstance(v, list) else _cell(v) for v in raw_labels
    )
    separator = m.label_separator
    if separator is None:  # "" is a choice: one label per cell
        separator = label_separator_detect(raw_values=raw_labels)
    labels = [
        list(labels_parse(raw=v, separator=separator, label_map=m.label_map)) if has_labels else []
        for v in raw_labels
    ]
    return ParsedFile(texts, labels, has_labels, len(problems), metadata, rows, problems)


def parse_uploaded_file(uploaded_file: Any) -> ParsedFile:
    folder = Path(tempfile.mkdtemp(prefix="medlitbot-upload-"))
    try:
        name = Path(getattr(uploaded_file, "name", "upload") or "upload").name
        target = folder / name
        with target.open("wb") as out:
            for chunk in uploaded_file.chunks():
                out.write(chunk)
        return parse_articles_file(target, filename=name)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _classifier(ml_model: MLModel) -> Any:
    if not ml_model.is_trained:
        raise ValueError(f"Model {ml_model.pk} ({ml_model.name}) is not trained yet")
    folder = mlmodel_artifact_dir(ml_model=ml_model)
    if folder is None or not (folder / "manifest.json").is_file():
        raise ValueError(
            f"Model {ml_model.pk}'s files are missing from {ml_model.artifact_path}; retrain it"
        )
    return ml_models.get_cached_classifier(str(folder))


def mlmodel_texts(*, ml_model: MLModel, texts: Sequence[str],
                  metadata: Sequence[Mapping[str, Any] | None] | None) -> list[str]:
    """The texts as this model reads them: with the metadata fields it was trained with, in its
    form (the one function training used: engine/metadata.text_with_metadata). A field an
    article lacks is left out; metadata None, or a text-only model: the texts unchanged."""
    config = getattr(_classifier(ml_model), "config", None)
    fields = list(getattr(config, "metadata_used", None) or [])
    if not fields or metadata is None:
        return list(texts)
    return texts_with_metadata(texts, metadata, fields=fields, style=config.metadata_style)


def mlmodel_article_texts(*, ml_model: MLModel, articles: Sequence[Any]) -> list[str]:
    """mlmodel_texts for articles of dataset_management.articles (batches, `predict`)."""
    return mlmodel_texts(ml_model=ml_model, texts=[a.text for a in articles],
                         metadata=[article_metadata(a) for a in articles])


def mlmodel_predict(
    *, ml_model: MLModel, texts: list[str], fast: bool = False, threshold: str = "f1"
) -> list[dict[str, Any]]:
    """[{"labels": [...], "probabilities": {label: p}}] per text; ValueError on an empty text,
    or on threshold="recall" with a model saved before recall thresholds.

    fast=True is for batches: the model's int8 fast path where it has one that kept its
    validation quality (the model page says which), else the standard path. threshold: "f1"
    (each label's F1-tuned rule) or "recall" (each label's threshold for the model's recall
    target on validation). The probabilities are calibrated (mlmodel_calibrated).
    """
    return _classifier(ml_model).predict(list(texts), fast=fast, threshold=threshold)


def calibration_applied(report: dict[str, Any] | None) -> bool:
    """Whether the calibration a model's stored metrics report changed its probabilities: a
    map was kept (a selection that kept "none" applied nothing) and it is not the identity (a
    temperature check that found nothing to correct leaves every probability as it was, so the
    Brier score and ECE before and after are then exactly equal)."""
    report = report or {}
    if str(report.get("chosen") or report.get("method") or "none") == "none":
        return False
    before = (report.get("brier_before"), report.get("ece_before"))
    after = (report.get("brier_after"), report.get("ece_after"))
    return None in before or before != after


def mlmodel_calibrated_by_id(*, ml_model_ids: set[int]) -> dict[int, bool]:
    """Per model id, whether a calibration map is applied to its probabilities, read from the
    metrics its training job stored (calibration_applied), without loading any model's files."""
    from django.db.models.fields.json import KeyTransform

    rows = MLModel.objects.filter(pk__in=ml_model_ids).values_list(
        "pk", KeyTransform("calibration", "metrics"))
    found = {pk: calibration_applied(report if isinstance(report, dict) else None)
             for pk, report in rows}
    return {pk: found.get(pk, False) for pk in ml_model_ids}


def mlmodel_calibrated(*, ml_model: MLModel) -> bool:
    """Whether a calibration map is applied to the model's probabilities: False for a model
    saved before calibration existed, trained with calibration "none", or whose "select" kept
    none (its probabilities are the model's own)."""
    return not _classifier(ml_model).calibration.is_identity
