"""A completed batch's downloads: CSV and JSON Lines as the runner wrote them, RIS made from the
JSON Lines as it is sent (every original record, the predicted labels as KW keywords behind
settings.EXPORT_LABEL_PREFIX, the probabilities in an N1 note). And the same exports written to
a file for `manage.py predict FILE --out OUT.(csv|ris|jsonl)`."""

from __future__ import annotations

import itertools
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from django.conf import settings

from classification.batches import packing, selectors, storage
from classification.engine.types import article_text
from classification.mlmodels.prediction import (
    mlmodel_article_texts,
    mlmodel_calibrated,
    mlmodel_predict,
)
from classification.models import BatchJob, MLModel
from dataset_management.articles import articles_read
from dataset_management.export import (
    CONTENT_TYPES,
    EXPORT_FORMATS,
    KEPT_IDENTIFIERS,
    PREDICTED,
    Export,
    csv_chunks,
    export_filename,
    item_id,
    jsonl_chunks,
    prediction_item,
    ris_chunks,
)

__all__ = ["CONTENT_TYPES", "EXPORT_FORMATS", "ExportUnavailable", "batch_job_export"]


class ExportUnavailable(ValueError):
    """The batch has a CSV but not what this format is made from; the message says why."""


def batch_job_export(*, batch: BatchJob, fmt: str) -> Export | None:
    """The batch's results as `fmt` (csv, ris or jsonl); None until the batch has completed.

    ValueError for an unknown format; ExportUnavailable for a batch that finished before its
    records were kept beside the CSV.
    """
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"format must be one of {', '.join(EXPORT_FORMATS)}, not {fmt!r}")
    result = selectors.batch_job_result_file(batch=batch)
    if result is None:
        return None
    stem = Path(selectors.batch_job_result_name(batch=batch)).stem
    name = export_filename(stem=stem, fmt=fmt)
    if fmt == "csv":
        return Export(filename=name, content_type=CONTENT_TYPES[fmt], path=result)
    records = result.with_name(storage.RECORDS_NAME)
    if not records.is_file():
        raise ExportUnavailable(
            "This batch was classified before RIS and JSON Lines results were kept: download "
            "the CSV, or classify the file again."
        )
    if fmt == "jsonl":
        return Export(filename=name, content_type=CONTENT_TYPES[fmt], path=records)
    return Export(filename=name, content_type=CONTENT_TYPES[fmt],
                  chunks=ris_chunks(_items(records), prefix=settings.EXPORT_LABEL_PREFIX))


def _items(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def mlmodel_predict_items(*, ml_model: MLModel, path: str | Path, filename: str | None = None,
                          threshold: str = "f1") -> Iterator[dict[str, Any]]:
    """Every article of a file, in order, as an export item with its prediction (none for an
    article without text: its note says it was skipped), saying, as a batch's items do, whether
    its probabilities are calibrated and which thresholds ("f1" or "recall") chose its labels.
    DatasetFileError for a bad file; ValueError for recall with a model that has none."""
    path = Path(path)
    about = {"calibrated": mlmodel_calibrated(ml_model=ml_model), "threshold": threshold}
    with articles_read(path=path, filename=filename or path.name,
                       overrides={"unlabelled": True}) as articles:
        source_format = articles.format
        for chunk in _chunks(enumerate(articles, start=1), packing.WINDOW):
            texts = mlmodel_article_texts(
                ml_model=ml_model, articles=[a for _, a in chunk if not a.problem])
            predictions = iter(packing.predict_packed(texts, lambda some: mlmodel_predict(
                ml_model=ml_model, texts=some, fast=True, threshold=threshold)))
            for index, article in chunk:
                yield {**prediction_item(
                    row=index, article=article, source_format=source_format,
                    prediction=None if article.problem else next(predictions)), **about}


def predictions_write(*, items: Iterable[dict[str, Any]], target: Path, fmt: str,
                      label_names: list[str]) -> tuple[int, int]:
    """Write the items as `fmt` to `target` (a temporary file renamed at the end, so a reader
    never sees half of it); (articles classified, articles skipped)."""
    counts = [0, 0]

    def counted(items: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for item in items:
            counts[bool(item["note"])] += 1
            yield item

    if fmt == "csv":
        chunks: Iterable[str] = csv_chunks(_predict_csv_rows(counted(items), label_names),
                                           bom=False)
    elif fmt == "ris":
        chunks = ris_chunks(counted(items), prefix=settings.EXPORT_LABEL_PREFIX)
    else:
        chunks = jsonl_chunks(counted(items))
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as handle:
            for piece in chunks:
                handle.write(piece)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return counts[0], counts[1]


def _predict_csv_rows(items: Iterator[dict[str, Any]],
                      label_names: list[str]) -> Iterator[list[Any]]:
    """`text` first, as predict's CSV always had it; the id joins it back to the input. A
    format whose identifiers every export keeps (PubMed XML: pmid, doi) has them after note."""
    first = next(items, None)
    kept = KEPT_IDENTIFIERS.get(first["source_format"], ()) if first else ()
    yield ["text", PREDICTED, *[f"p_{name}" for name in label_names], "id", "note", *kept]
    for item in itertools.chain([first] if first else [], items):
        identifiers = item.get("identifiers") or {}
        yield [article_text(item["title"], item["abstract"]), item[PREDICTED],
               *[_probability(item["probabilities"].get(name)) for name in label_names],
               item_id(item), item["note"], *[identifiers.get(kind, "") for kind in kept]]


def _probability(value: float | None) -> Any:
    return "" if value is None else round(float(value), 4)


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk
