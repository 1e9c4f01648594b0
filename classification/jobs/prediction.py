"""Prediction and evaluation with a trained model, and reading labelled files for them.

Files are parsed by the ingestion readers (every format import accepts), without saving a
Dataset. The classifier is cached per process by ml_models.get_cached_classifier.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from classification import ml_models
from classification.engine.types import article_text
from classification.models import MLModel


@dataclass
class ParsedFile:
    texts: list[str]
    labels: list[list[str]]  # [] per row when the file has no label column
    has_labels: bool
    dropped: int


def _cell(value: Any) -> str:
    return "" if value is None else str(value).strip()


def parse_articles_file(path: str | Path, *, filename: str | None = None) -> ParsedFile:
    """Any file ingestion accepts -> texts (title + blank line + abstract) and labels."""
    from dataset_management.mapping import label_separator_detect, labels_parse, mapping_detect
    from dataset_management.readers import ERROR_KEY, read_records

    path = Path(path)
    texts: list[str] = []
    raw_labels: list[Any] = []
    dropped = 0
    with read_records(path, filename=filename or path.name) as stream:
        m = mapping_detect(columns=stream.columns)
        for _row, record in stream.records:
            if ERROR_KEY in record:
                dropped += 1
                continue
            title = _cell(record.get(m.title)) if m.title else ""
            abstract = _cell(record.get(m.abstract)) if m.abstract else ""
            text = article_text(title, abstract)
            if not text:
                dropped += 1
                continue
            texts.append(text)
            raw_labels.append(record.get(m.label, "") if m.label else "")
    if not texts:
        raise ValueError(f"No article text found in {filename or path.name}")
    has_labels = bool(m.label) and any(
        v if isinstance(v, list) else _cell(v) for v in raw_labels
    )
    separator = m.label_separator or label_separator_detect(raw_values=raw_labels)
    labels = [
        list(labels_parse(raw=v, separator=separator, label_map=m.label_map)) if has_labels else []
        for v in raw_labels
    ]
    return ParsedFile(texts, labels, has_labels, dropped)


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
    if not Path(ml_model.artifact_path, "manifest.json").is_file():
        raise ValueError(
            f"Model {ml_model.pk}'s files are missing from {ml_model.artifact_path}; retrain it"
        )
    return ml_models.get_cached_classifier(ml_model.artifact_path)


def mlmodel_predict(*, ml_model: MLModel, texts: list[str]) -> list[dict[str, Any]]:
    """[{"labels": [...], "probabilities": {label: p}}] per text; ValueError on an empty text."""
    return _classifier(ml_model).predict(list(texts))


def mlmodel_evaluate_file(
    *, ml_model: MLModel, path: str | Path, filename: str | None = None
) -> dict[str, Any]:
    parsed = parse_articles_file(path, filename=filename)
    return _evaluate(ml_model, parsed)


def mlmodel_evaluate_upload(*, ml_model: MLModel, uploaded_file: Any) -> dict[str, Any]:
    return _evaluate(ml_model, parse_uploaded_file(uploaded_file))


def _evaluate(ml_model: MLModel, parsed: ParsedFile) -> dict[str, Any]:
    if not parsed.has_labels:
        raise ValueError("The file has no label column, so there is nothing to evaluate against")
    clf = _classifier(ml_model)
    data = ml_models.TextData(texts=parsed.texts, labels=parsed.labels)
    metrics = clf.evaluate(data)
    unknown = sorted({lab for row in parsed.labels for lab in row} - set(clf.label_names))
    if unknown:
        metrics["unknown_labels"] = unknown
    return metrics
