"""What the inference worker runs for one batch: read the file, classify in chunks, write a CSV.

The row is the only channel to the web: the runner writes processed/total at most once per
PROGRESS_WRITE_INTERVAL (that write doubles as its heartbeat for the reaper), and each write
also tells it whether someone asked to cancel or already ended the batch.
"""

from __future__ import annotations

import csv
import logging
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils import timezone

from classification import faults
from classification import services as classification_services
from classification.batches import storage
from classification.batches.lifecycle import batch_job_claim, batch_job_finish
from classification.engine.types import article_text
from classification.models import BatchJob, MLModel
from dataset_management.export import csv_safe_cell

logger = logging.getLogger(__name__)

S = BatchJob.Status
# Texts per predict call: big enough for the engine to batch well (it sorts by length within a
# call), small enough that progress and cancel are seen about every second on a CPU.
CHUNK = 64
ID_COLUMNS = ("pmid", "id", "doi", "record_id", "accession")


class BatchFileError(ValueError):
    """The file cannot be classified; the message is for the person."""


class _Cancelled(Exception):
    pass


class _EndedElsewhere(Exception):
    """The row left `running` under us (the reaper gave up on it): stop without writing."""


class _Progress:
    """Throttled progress writes that also bring back cancel requests."""

    def __init__(self, batch_id: uuid.UUID) -> None:
        self.batch_id = batch_id
        self.interval = float(settings.PROGRESS_WRITE_INTERVAL)
        self.last = time.monotonic()
        self.processed = 0
        self.skipped = 0
        self.total: int | None = None

    def report(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last < self.interval:
            return
        self.last = now
        fields: dict[str, Any] = {
            "processed": self.processed, "skipped": self.skipped, "updated_at": timezone.now(),
        }
        if self.total is not None:
            fields["total"] = self.total
        # One UPDATE does the write and the check: it matches only a running, uncancelled row.
        if BatchJob.objects.filter(
            pk=self.batch_id, status=S.RUNNING, cancel_requested=False
        ).update(**fields):
            return
        row = BatchJob.objects.filter(pk=self.batch_id).values("status").first()
        if row and row["status"] == S.RUNNING:
            raise _Cancelled()
        raise _EndedElsewhere(row["status"] if row else "deleted")

    @property
    def counted(self) -> str:
        if self.total is None:
            return "while reading the file"
        return f"after {self.processed} of {self.total} articles"


def read_articles(path: Path, *, filename: str, meta: dict[str, Any]) -> Iterator[dict[str, str]]:
    """Rows as {"id", "title", "abstract", "problem"} in file order, problems included.

    Sets ``meta["id_column"]`` before the first row, so the CSV header can include it.
    """
    from dataset_management.mapping import mapping_detect
    from dataset_management.readers import ERROR_KEY, read_records

    with read_records(path, filename=filename) as stream:
        mapping = mapping_detect(columns=stream.columns)
        if not (mapping.title or mapping.abstract):
            raise BatchFileError(
                f"No title or abstract column among: {', '.join(stream.columns)}."
            )
        by_key = {c.strip().casefold(): c for c in stream.columns}
        id_column = next((by_key[n] for n in ID_COLUMNS if n in by_key), None)
        meta["id_column"] = id_column or ""
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


def _probability(value: float | None) -> str:
    return "" if value is None else f"{float(value):.4f}"


def _chunk_delay() -> float:
    # Test-only (faults are read only under the test settings): time to watch or kill a batch.
    return float(faults.active_faults().get("slow_batch_chunk") or 0)


def _classify_to_csv(*, batch: BatchJob, source: Path, part: Path, progress: _Progress) -> None:
    ml_model: MLModel = batch.ml_model
    labels = list(ml_model.label_names)
    meta: dict[str, Any] = {}
    total = 0
    for _ in read_articles(source, filename=batch.filename, meta=meta):
        total += 1
        progress.report()  # a heartbeat while a large file is counted
    progress.total = total
    progress.report(force=True)
    with_id = bool(meta.get("id_column"))
    header = ["row", *(["id"] if with_id else []), "title", "abstract", "predicted_labels",
              *[f"p_{name}" for name in labels], "note"]
    delay = _chunk_delay()
    # utf-8-sig: Excel reads the BOM as "this is UTF-8" and shows accents correctly.
    with part.open("w", encoding="utf-8-sig", newline="") as out:
        writer = csv.writer(out)
        writer.writerow([csv_safe_cell(h) for h in header])
        chunk: list[tuple[int, dict[str, str]]] = []
        articles = read_articles(source, filename=batch.filename, meta=meta)
        for index, article in enumerate(articles, start=1):
            chunk.append((index, article))
            if len(chunk) >= CHUNK:
                _write_chunk(writer, chunk, ml_model, labels, with_id, progress)
                chunk = []
                if delay:
                    time.sleep(delay)
                progress.report()
        _write_chunk(writer, chunk, ml_model, labels, with_id, progress)
        out.flush()
        os.fsync(out.fileno())


def _write_chunk(writer: Any, chunk: list[tuple[int, dict[str, str]]], ml_model: MLModel,
                 labels: list[str], with_id: bool, progress: _Progress) -> None:
    todo = [a for _, a in chunk if not a["problem"]]
    texts = [article_text(a["title"], a["abstract"]) for a in todo]
    predictions = iter(
        classification_services.mlmodel_predict(ml_model=ml_model, texts=texts) if texts else []
    )
    for index, article in chunk:
        prediction = {} if article["problem"] else next(predictions)
        probabilities = prediction.get("probabilities", {})
        row = [index, *([article["id"]] if with_id else []), article["title"],
               article["abstract"], prediction.get("labels", []),
               *[_probability(probabilities.get(name)) for name in labels],
               f"skipped: {article['problem']}" if article["problem"] else ""]
        writer.writerow([csv_safe_cell(cell) for cell in row])
    progress.processed += len(chunk)
    progress.skipped += len(chunk) - len(todo)


def _failure_reason(exc: Exception) -> str:
    from dataset_management.readers import DatasetFileError

    if isinstance(exc, DatasetFileError | BatchFileError | UnicodeError | csv.Error):
        return f"Could not read that file: {exc}"
    return f"Classification stopped with an error: {type(exc).__name__}: {exc}"


def batch_job_run(*, batch_id: uuid.UUID | str) -> str | None:
    """Run one queued batch to its end; the final status, or None if this delivery did nothing.

    The claim (queued -> running) succeeds once, so a duplicate delivery, or a batch cancelled
    while it waited, returns None at once. Whatever happens, the input file is deleted: the
    upload is not kept once classified.
    """
    if not batch_job_claim(batch_id=batch_id):
        logger.info("batch %s: not queued any more, nothing to do", batch_id)
        return None
    batch = BatchJob.objects.select_related("ml_model").get(pk=batch_id)
    source = storage.absolute(batch.input_path)
    folder = source.parent
    part = folder / f"{storage.RESULT_NAME}.part"
    progress = _Progress(batch.pk)
    try:
        if not batch.ml_model.is_trained:
            raise BatchFileError("the model is not trained any more; train it again first")
        _classify_to_csv(batch=batch, source=source, part=part, progress=progress)
        result = folder / storage.RESULT_NAME
        os.replace(part, result)
        ended = batch_job_finish(
            batch_id=batch.pk, target=S.COMPLETED, total=progress.total,
            processed=progress.processed, skipped=progress.skipped,
            result_path=storage.relative(result),
        )
        return S.COMPLETED if ended else None
    except _Cancelled:
        batch_job_finish(
            batch_id=batch.pk, target=S.CANCELLED, processed=progress.processed,
            skipped=progress.skipped, reason=f"Cancelled {progress.counted}.",
        )
        return S.CANCELLED
    except _EndedElsewhere as exc:
        logger.warning("batch %s ended elsewhere (%s); stopping", batch.pk, exc)
        return None
    except Exception as exc:
        reason = _failure_reason(exc)
        if reason.startswith("Classification stopped"):
            # A bad file is the person's news; anything else is a bug worth a traceback.
            logger.exception("batch %s failed", batch.pk)
        batch_job_finish(
            batch_id=batch.pk, target=S.FAILED, reason=reason, processed=progress.processed,
            skipped=progress.skipped,
        )
        return S.FAILED
    finally:
        source.unlink(missing_ok=True)
        part.unlink(missing_ok=True)
