"""Batch classification: a file of articles classified in the background, then a safe CSV.

It runs on a one-thread pool inside the web process, not on Celery: the one worker runs
``--pool=solo`` and may be busy for hours with a training, while a batch of a few thousand
abstracts takes seconds to minutes and must not queue behind it. The cost: a batch dies with
its web process, and the status then says so (see batch_store.runner_alive).
"""

from __future__ import annotations

import csv
import logging
import os
import secrets
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from django.conf import settings

from classification import services
from classification.models import MLModel
from dataset_management.export import csv_safe_cell
from web import batch_store as store

logger = logging.getLogger(__name__)
CHUNK = 32  # texts per predict call: big enough to batch well, small enough for live progress
ID_COLUMNS = ("pmid", "id", "doi", "record_id", "accession")
# One batch at a time per web process: a second waits (status "queued") instead of halving
# the CPU both get, and the web keeps a core's worth of room for its pages.
_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="medlitbot-batch")


class BatchError(ValueError):
    """The upload cannot become a batch; the message is for the person."""


def batch_create(*, owner_id: int, ml_model: MLModel, uploaded_file: Any) -> dict[str, Any]:
    if not ml_model.is_trained:
        raise BatchError("Train the model before classifying with it.")
    if uploaded_file.size > settings.MAX_UPLOAD_SIZE:
        raise BatchError(f"The file is {uploaded_file.size / 2**20:.1f} MB; the limit is "
                         f"{settings.MAX_UPLOAD_SIZE / 2**20:.0f} MB.")
    store.purge_old(owner_id)
    batch_id = secrets.token_hex(16)
    folder = store.batch_root(owner_id) / batch_id
    folder.mkdir(parents=True)
    filename = Path(uploaded_file.name or "articles").name[:200]
    # The reader goes by the original name (kept in status); the file on disk only keeps a
    # tidy extension, so nothing a person typed ever becomes part of a path.
    suffix = "." + "".join(c for c in Path(filename).suffix.lower() if c.isalnum())[:8]
    with (folder / f"input{suffix}").open("wb") as out:
        for chunk in uploaded_file.chunks():
            out.write(chunk)
    status = {
        "id": batch_id, "model_id": ml_model.pk, "model_name": ml_model.name,
        "filename": filename, "status": "queued", "total": None, "processed": 0,
        "skipped": 0, "reason": "", "created_at": time.time(), "finished_at": None,
        "runner": store.runner_identity(),
    }
    store.status_write(folder, status)
    _pool.submit(_run, folder, status, ml_model, folder / f"input{suffix}")
    return status


def batch_get(*, owner_id: int, batch_id: str) -> dict[str, Any] | None:
    folder = store.batch_folder(owner_id, batch_id)
    return store.status_read(folder) if folder else None


def batch_result_path(*, owner_id: int, batch_id: str) -> Path | None:
    folder = store.batch_folder(owner_id, batch_id)
    path = folder / "result.csv" if folder else None
    return path if path and path.is_file() else None


def _run(folder: Path, status: dict[str, Any], ml_model: MLModel, path: Path) -> None:
    try:
        status.update(status="running", started_at=time.time(),
                      total=sum(1 for _ in _articles(path, status)))
        store.status_write(folder, status)
        _classify_to_csv(folder, status, ml_model, path)
        status.update(status="completed", finished_at=time.time())
    except Exception as exc:  # the person sees the reason; the log keeps the traceback
        if not _is_bad_file(exc):  # a bad file is the person's news, not a bug to log
            logger.exception("batch %s failed", status["id"])
        status.update(status="failed", reason=_reason(exc), finished_at=time.time())
    finally:
        path.unlink(missing_ok=True)  # the upload is not kept once classified
        store.status_write(folder, status)


def _is_bad_file(exc: Exception) -> bool:
    from dataset_management.readers import DatasetFileError

    return isinstance(exc, DatasetFileError | ValueError)


def _reason(exc: Exception) -> str:
    if _is_bad_file(exc):
        return f"Could not read that file: {exc}"
    return f"Classification stopped with an error: {type(exc).__name__}: {exc}"


def _articles(path: Path, status: dict[str, Any]) -> Iterator[dict[str, str]]:
    """Rows as {"id", "title", "abstract", "problem"} in file order, problems included."""
    from dataset_management.mapping import mapping_detect
    from dataset_management.readers import ERROR_KEY, read_records

    with read_records(path, filename=status["filename"]) as stream:
        mapping = mapping_detect(columns=stream.columns)
        if not (mapping.title or mapping.abstract):
            raise BatchError(f"No title or abstract column among: {', '.join(stream.columns)}.")
        by_key = {c.strip().casefold(): c for c in stream.columns}
        id_column = next((by_key[n] for n in ID_COLUMNS if n in by_key), None)
        status["id_column"] = id_column or ""
        for _row, record in stream.records:
            if ERROR_KEY in record:
                yield {"id": "", "title": "", "abstract": "", "problem": str(record[ERROR_KEY])}
                continue
            title = _cell(record.get(mapping.title)) if mapping.title else ""
            abstract = _cell(record.get(mapping.abstract)) if mapping.abstract else ""
            yield {"id": _cell(record.get(id_column)) if id_column else "", "title": title,
                   "abstract": abstract, "problem": "" if title or abstract else "no text"}


def _cell(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _classify_to_csv(folder: Path, status: dict[str, Any], ml_model: MLModel,
                     path: Path) -> None:
    labels = list(ml_model.label_names)
    header = ["row", *(["id"] if status.get("id_column") else []), "title", "abstract",
              "predicted_labels", *[f"p_{name}" for name in labels], "note"]
    part = folder / "result.csv.part"
    # utf-8-sig: Excel reads the BOM as "this is UTF-8" and shows accents correctly.
    with part.open("w", encoding="utf-8-sig", newline="") as out:
        writer = csv.writer(out)
        writer.writerow([csv_safe_cell(h) for h in header])
        chunk: list[tuple[int, dict[str, str]]] = []
        for index, article in enumerate(_articles(path, status), start=1):
            chunk.append((index, article))
            if len(chunk) >= CHUNK:
                _write_chunk(writer, chunk, ml_model, labels, status)
                store.status_write(folder, status)
                chunk = []
        _write_chunk(writer, chunk, ml_model, labels, status)
    os.replace(part, folder / "result.csv")


def _write_chunk(writer: Any, chunk: list[tuple[int, dict[str, str]]], ml_model: MLModel,
                 labels: list[str], status: dict[str, Any]) -> None:
    todo = [(i, a) for i, a in chunk if not a["problem"]]
    texts = [f"{a['title']}\n\n{a['abstract']}".strip() for _, a in todo]
    predictions = iter(services.mlmodel_predict(ml_model=ml_model, texts=texts) if texts else [])
    with_id = bool(status.get("id_column"))
    for index, article in chunk:
        prediction = {} if article["problem"] else next(predictions)
        probabilities = prediction.get("probabilities", {})
        row = [index, *([article["id"]] if with_id else []), article["title"],
               article["abstract"], prediction.get("labels", []),
               *[_probability(probabilities.get(name)) for name in labels],
               f"skipped: {article['problem']}" if article["problem"] else ""]
        writer.writerow([csv_safe_cell(cell) for cell in row])
    status["processed"] += len(chunk)
    status["skipped"] += len(chunk) - len(todo)


def _probability(value: float | None) -> str:
    return "" if value is None else f"{float(value):.4f}"
