"""Prediction and evaluation with a trained model, and reading labelled files for them.

Files are parsed by the ingestion readers (every format import accepts), without saving a
Dataset. The classifier is cached per process by ml_models.get_cached_classifier.
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from classification import ml_models
from classification.mlmodels.evaluation import EvaluationColumns, mlmodel_evaluation_columns
from classification.mlmodels.overlap import evaluation_overlap
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
    dropped = 0
    with articles_read(path=path, filename=filename or path.name, mapping=mapping) as articles:
        m = articles.mapping
        for article in articles:
            if article.problem:
                dropped += 1
                continue
            texts.append(article.text)
            raw_labels.append(article.raw_labels)
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
    folder = mlmodel_artifact_dir(ml_model=ml_model)
    if folder is None or not (folder / "manifest.json").is_file():
        raise ValueError(
            f"Model {ml_model.pk}'s files are missing from {ml_model.artifact_path}; retrain it"
        )
    return ml_models.get_cached_classifier(str(folder))


def mlmodel_predict(
    *, ml_model: MLModel, texts: list[str], fast: bool = False
) -> list[dict[str, Any]]:
    """[{"labels": [...], "probabilities": {label: p}}] per text; ValueError on an empty text.

    fast=True is for batches: the model's int8 fast path where it has one that kept its
    validation quality (the model page says which), else the standard path.
    """
    return _classifier(ml_model).predict(list(texts), fast=fast)


def mlmodel_evaluate_file(
    *,
    ml_model: MLModel,
    path: str | Path,
    filename: str | None = None,
    overrides: dict[str, Any] | None = None,
    columns: EvaluationColumns | None = None,
) -> dict[str, Any]:
    """The model's metrics on a labelled file, its columns mapped as import maps them (the
    model's own training mapping first: see mlmodels.evaluation). `overrides` takes title_column,
    abstract_column or text_column, label_column and label_separator; `columns`, a preview
    already made of this file with them, saves reading it again.

    The result adds `columns` (role -> column and where it came from), `unknown_labels`
    ({label: rows}) and the rows left out: `rows_unknown_labels_only`, `rows_without_labels`,
    `rows_dropped` (no text). ValueError or DatasetFileError when there is nothing to score.
    """
    if columns is None:
        columns = mlmodel_evaluation_columns(ml_model=ml_model, path=path, filename=filename,
                                             overrides=overrides)
    problem = columns.problem(text_option="the abstract or text column option",
                              label_option="the label column option")
    if problem:
        raise ValueError(problem)
    parsed = parse_articles_file(path, filename=columns.filename, mapping=columns.mapping)
    metrics = _evaluate(ml_model, parsed)
    # Rows the model was trained or validated on flatter its scores: counted for every caller.
    overlap = evaluation_overlap(ml_model=ml_model, texts=parsed.texts)
    return metrics | {"columns": columns.as_dict(), "training_overlap": overlap}


def mlmodel_evaluate_upload(
    *, ml_model: MLModel, uploaded_file: Any, overrides: dict[str, Any] | None = None
) -> dict[str, Any]:
    """mlmodel_evaluate_file on an upload, spooled to a temporary folder for the readers."""
    folder = Path(tempfile.mkdtemp(prefix="medlitbot-evaluate-"))
    try:
        name = Path(getattr(uploaded_file, "name", "") or "upload").name
        with (folder / name).open("wb") as out:
            for chunk in uploaded_file.chunks():
                out.write(chunk)
        return mlmodel_evaluate_file(ml_model=ml_model, path=folder / name, filename=name,
                                     overrides=overrides)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _evaluate(ml_model: MLModel, parsed: ParsedFile) -> dict[str, Any]:
    """Score the rows whose labels the model knows; report the labels it does not know.

    A label the model never saw cannot be predicted, so it is taken out of its row's truth
    (and counted) rather than scored as a miss on every row; a row left with no label is left
    out of the scores, and counted.
    """
    from dataset_management.readers.errors import names_listed

    clf = _classifier(ml_model)
    known = set(clf.label_names)
    unknown: Counter[str] = Counter()
    truth: list[list[str]] = []
    without_labels = unknown_only = 0
    for row in parsed.labels:
        kept = [label for label in row if label in known]
        unknown.update(label for label in row if label not in known)
        without_labels += not row
        unknown_only += bool(row) and not kept
        truth.append(kept)
    if not any(truth):
        if unknown:
            raise ValueError(
                f"None of the file's labels ({names_listed(sorted(unknown))}) is one the model "
                f"knows ({names_listed(clf.label_names)}): is the label column the right one?"
            )
        raise ValueError("The label column is empty in every row: there is nothing to score "
                         "the model against.")
    metrics = clf.evaluate(ml_models.TextData(texts=parsed.texts, labels=truth))
    metrics.update({
        "unknown_labels": dict(sorted(unknown.items(), key=lambda kv: (-kv[1], kv[0]))),
        "rows_unknown_labels_only": unknown_only,
        "rows_without_labels": without_labels,
        "rows_dropped": parsed.dropped,
    })
    return metrics
