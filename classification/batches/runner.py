"""What the inference worker runs for one batch: read the file, classify in chunks, write a CSV
and, beside it, the JSON Lines of each article's identifiers, record and prediction (the RIS and
JSON Lines downloads: classification.batches.exports).

A file of more than BATCH_SHARD_ROWS articles is cut into shards instead, which every live
inference worker runs (shards.py, which uses the pieces below for each shard).

The row is the only channel to the web: the runner writes processed/total at most once per
PROGRESS_WRITE_INTERVAL (that write doubles as its heartbeat for the reaper), and each write
also tells it whether someone asked to cancel or already ended the batch.

After each chunk the runner records a checkpoint (checkpoint.py), so that a batch whose worker
died, sent again by the reaper or the next worker's start, carries on after the last chunk.
"""

from __future__ import annotations

import csv
import logging
import os
import time
import uuid
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.utils import timezone

from classification import faults
from classification.batches import checkpoint, packing, storage
from classification.batches.checkpoint import Checkpoint
from classification.batches.lifecycle import batch_job_claim, batch_job_finish
from classification.mlmodels.explanations import mlmodel_top_terms
from classification.mlmodels.prediction import (
    mlmodel_article_texts,
    mlmodel_calibrated,
    mlmodel_predict,
)
from classification.models import BatchJob, MLModel
from core import filestore
from dataset_management.articles import Article, ArticleStream, articles_read
from dataset_management.export import (
    csv_safe_cell,
    jsonl_line,
    prediction_csv_header,
    prediction_csv_row,
    prediction_item,
    prediction_source_columns,
)

logger = logging.getLogger(__name__)

S = BatchJob.Status


class BatchFileError(ValueError):
    """The file cannot be classified; the message is for the person."""


class Cancelled(Exception):
    pass


class EndedElsewhere(Exception):
    """The row left `running` under us (the reaper gave up on it): stop without writing."""


class Progress:
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
        if self.write():
            return
        row = BatchJob.objects.filter(pk=self.batch_id).values("status").first()
        if row and row["status"] == S.RUNNING:
            raise Cancelled()
        raise EndedElsewhere(row["status"] if row else "deleted")

    def write(self) -> bool:
        """One UPDATE does the write and the check: it matches only a running, uncancelled
        row (a shard's progress writes its own row too: shards.py)."""
        fields: dict[str, Any] = {
            "processed": self.processed, "skipped": self.skipped, "updated_at": timezone.now(),
        }
        if self.total is not None:
            fields["total"] = self.total
        return bool(BatchJob.objects.filter(
            pk=self.batch_id, status=S.RUNNING, cancel_requested=False).update(**fields))

    @property
    def counted(self) -> str:
        if self.total is None:
            return "while reading the file"
        return f"after {self.processed} of {self.total} articles"


def chunk_delay() -> float:
    # Test-only (faults are read only under the test settings): time to watch or kill a batch.
    return float(faults.active_faults().get("slow_batch_chunk") or 0)


def batch_articles(batch: BatchJob, source: Path) -> ArticleStream:
    # A batch has no labels to read: no label column is looked for (or guessed).
    return articles_read(path=source, filename=batch.filename, overrides={"unlabelled": True})


def stream_layout(articles: ArticleStream) -> dict[str, Any]:
    """What the result's columns depend on, as JSON (a sharded batch keeps it on its row)."""
    return {"format": articles.format, "columns": list(articles.columns),
            "identifier_kinds": list(articles.identifier_columns)}


class Outputs:
    """The two result files, written row by row in file order: the CSV (docs/contracts.md) and
    the JSON Lines of export items that the RIS and JSON Lines downloads come from, each item
    saying whether its probabilities are calibrated and which thresholds chose its labels.

    write_window predicts with `threshold` from here, so a file cannot name other thresholds
    than those that chose its labels."""

    def __init__(self, csv_out: IO[str], records_out: IO[str], *, labels: list[str],
                 layout: dict[str, Any], top_terms: bool, header: bool,
                 threshold: str = "f1", calibrated: bool = False) -> None:
        self.csv = csv.writer(csv_out)
        self.records = records_out
        self.labels, self.source_format = labels, layout["format"]
        self.threshold, self.calibrated = threshold, calibrated
        self.with_id = bool(layout["identifier_kinds"])
        self.top_terms = top_terms
        # The source's own columns (identifiers, citation, a CSV's other columns), kept after
        # the result's: the file goes back where it came from with nothing dropped.
        self.source_columns = prediction_source_columns(
            columns=layout["columns"], source_format=layout["format"],
            identifier_kinds=layout["identifier_kinds"])
        if header:  # not when resuming: the part already starts with it
            header_row = prediction_csv_header(label_names=labels, with_id=self.with_id,
                                               top_terms=top_terms,
                                               source_columns=self.source_columns)
            self.csv.writerow([csv_safe_cell(h) for h in header_row])

    def write(self, index: int, article: Article, prediction: dict[str, Any] | None,
              terms: dict[str, list[str]] | str | None = None) -> None:
        item = prediction_item(row=index, article=article, source_format=self.source_format,
                               prediction=prediction)
        if self.top_terms:
            item["top_terms"] = terms if terms is not None else {}
        row = prediction_csv_row(item, label_names=self.labels, with_id=self.with_id,
                                 top_terms=self.top_terms, source_columns=self.source_columns)
        self.csv.writerow([csv_safe_cell(cell) for cell in row])
        # Not in the CSV, whose columns stay as they were; the batch's page and API say it too.
        item["calibrated"], item["threshold"] = self.calibrated, self.threshold
        self.records.write(jsonl_line(item))


def batch_outputs(batch: BatchJob, csv_out: IO[str], records_out: IO[str], *,
                  layout: dict[str, Any], header: bool) -> Outputs:
    """The batch's Outputs, with its model's labels and calibration and its own choices."""
    return Outputs(csv_out, records_out, labels=list(batch.ml_model.label_names), layout=layout,
                   top_terms=batch.top_terms, header=header, threshold=batch.threshold,
                   calibrated=mlmodel_calibrated(ml_model=batch.ml_model))


def window_size() -> int:
    # Test-only, like the delay: chunks small enough to kill a worker between two of them.
    return int(faults.active_faults().get("batch_window") or packing.WINDOW)


def _count(batch: BatchJob, source: Path, progress: Progress) -> int:
    total = 0
    with batch_articles(batch, source) as articles:
        for _ in articles:
            total += 1
            progress.report()  # a heartbeat while a large file is counted
    progress.total = total
    progress.report(force=True)
    return total


def _classify(*, batch: BatchJob, source: Path, parts: tuple[Path, Path], progress: Progress,
              resume: Checkpoint | None) -> None:
    """Classify the file into the parts, a checkpoint after each chunk (checkpoint.py); with
    `resume`, append to the parts after the articles it counts."""
    ml_model: MLModel = batch.ml_model
    done = resume.rows if resume else 0
    if resume:
        progress.processed, progress.skipped = resume.processed, resume.skipped
    if progress.total is None:
        _count(batch, source, progress)
    delay, size, model = chunk_delay(), window_size(), checkpoint.model_fingerprint(ml_model)
    csv_part, records_part = parts
    mode = "a" if resume else "w"
    # utf-8-sig: Excel reads the BOM as "this is UTF-8" and shows accents correctly (a resumed
    # part has it already).
    with (batch_articles(batch, source) as articles,
          csv_part.open(mode, encoding="utf-8" if resume else "utf-8-sig", newline="") as csv_out,
          records_part.open(mode, encoding="utf-8") as records_out):
        outputs = batch_outputs(batch, csv_out, records_out, layout=stream_layout(articles),
                                header=resume is None)
        window: list[tuple[int, Article]] = []
        for index, article in enumerate(articles, start=1):
            if index <= done:  # written before the worker died
                continue
            window.append((index, article))
            if len(window) >= size:
                write_window(outputs, window, ml_model, progress, delay)
                window = []
                checkpoint.checkpoint_write(
                    folder=csv_part.parent, parts=(csv_out, records_out), rows=index,
                    processed=progress.processed, skipped=progress.skipped, model=model)
        write_window(outputs, window, ml_model, progress, delay)
        for out in (csv_out, records_out):
            out.flush()
            os.fsync(out.fileno())


def write_window(outputs: Outputs, window: list[tuple[int, Article]], ml_model: MLModel,
                  progress: Progress, delay: float) -> None:
    """Classify a window of articles in length-packed calls (packing.py), then write its rows
    in file order. Progress and cancel are checked after every call."""
    todo = [a for _, a in window if not a.problem]

    def after_call(count: int) -> None:
        progress.processed += count
        if delay:
            time.sleep(delay)
        progress.report()

    predictions = iter(packing.predict_packed(
        mlmodel_article_texts(ml_model=ml_model, articles=todo),  # with their metadata
        lambda texts: mlmodel_predict(ml_model=ml_model, texts=texts, fast=True,
                                      threshold=outputs.threshold),
        after_call=after_call,
    ))
    for index, article in window:
        prediction = None if article.problem else next(predictions)
        terms = _terms(ml_model, article, prediction) if outputs.top_terms else None
        outputs.write(index, article, prediction, terms)
    progress.processed += len(window) - len(todo)
    progress.skipped += len(window) - len(todo)


def _terms(ml_model: MLModel, article: Article,
           prediction: dict[str, Any] | None) -> dict[str, list[str]] | str | None:
    if prediction is None:
        return None
    try:
        return mlmodel_top_terms(ml_model=ml_model, text=article.text,
                                 labels=prediction["labels"])
    except ValueError as exc:  # one article's explanation must not fail the whole batch
        return f"not available: {exc}"


def failure_reason(exc: Exception) -> str:
    from dataset_management.readers import DatasetFileError

    if isinstance(exc, DatasetFileError | BatchFileError | UnicodeError | csv.Error):
        return f"Could not read that file: {exc}"
    return f"Classification stopped with an error: {type(exc).__name__}: {exc}"


def _resume_point(batch: BatchJob, *, folder: Path,
                  parts: tuple[Path, Path]) -> Checkpoint | None:
    """Sent again after its worker died: where to carry on (after the last complete chunk)."""
    folder.mkdir(parents=True, exist_ok=True)
    resume = checkpoint.checkpoint_resume(
        folder=folder, parts=parts, model=checkpoint.model_fingerprint(batch.ml_model))
    if resume:
        logger.info("batch %s: resuming after article %d", batch.pk, resume.rows)
    return resume


def results_publish(*, folder: Path, parts: tuple[Path, Path]) -> Path:
    """The finished parts become the results; the CSV's path."""
    # The records first: a CSV in place is what says the batch's results are whole.
    os.replace(parts[1], folder / storage.RECORDS_NAME)
    result = folder / storage.RESULT_NAME
    os.replace(parts[0], result)
    storage.results_publish(folder=folder)
    return result


def _stopped(batch: BatchJob, *, exc: Exception, progress: Progress) -> str | None:
    """End a batch that did not run to its end: cancelled, ended elsewhere, or failed."""
    counts = {"processed": progress.processed, "skipped": progress.skipped}
    if isinstance(exc, Cancelled):
        batch_job_finish(batch_id=batch.pk, target=S.CANCELLED,
                         reason=f"Cancelled {progress.counted}.", **counts)
        return S.CANCELLED
    if isinstance(exc, EndedElsewhere):
        logger.warning("batch %s ended elsewhere (%s); stopping", batch.pk, exc)
        return None
    reason = failure_reason(exc)
    if reason.startswith("Classification stopped"):
        # A bad file is the person's news; anything else is a bug worth a traceback.
        logger.error("batch %s failed", batch.pk, exc_info=exc)
    batch_job_finish(batch_id=batch.pk, target=S.FAILED, reason=reason, **counts)
    return S.FAILED


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
    folder = storage.absolute(batch.input_path).parent
    parts = checkpoint.result_parts(folder=folder)
    progress = Progress(batch.pk)
    source: Path | None = None
    sharded = False
    try:
        if not batch.ml_model.is_trained:
            raise BatchFileError("the model is not trained any more; train it again first")
        # The web node that took the upload may be another machine: fetch it from there.
        source = filestore.file_local(name=batch.input_path)
        resume = _resume_point(batch, folder=folder, parts=parts)
        # A large file is cut into shards that every live inference worker runs (shards.py,
        # imported here: it builds on this module's pieces); a resumed one-piece batch stays
        # in one piece, whatever the workers now.
        from classification.batches import shards

        if resume is None and (count := shards.shard_plan(
                total=_count(batch, source, progress))) > 1:
            sharded = True
            return shards.batch_shards_start(batch=batch, source=source, count=count)
        _classify(batch=batch, source=source, parts=parts, progress=progress, resume=resume)
        result = results_publish(folder=folder, parts=parts)
        # Before the row says "completed": whoever sees it finished finds only the results.
        _leftovers_discard(batch, folder=folder, parts=parts, source=source)
        ended = batch_job_finish(
            batch_id=batch.pk, target=S.COMPLETED, total=progress.total,
            processed=progress.processed, skipped=progress.skipped,
            result_path=storage.relative(result),
        )
        return S.COMPLETED if ended else None
    except Exception as exc:
        if not sharded:
            # Before the row says how it ended: whoever sees it ended finds nothing left over.
            _leftovers_discard(batch, folder=folder, parts=parts, source=source)
        return _stopped(batch, exc=exc, progress=progress)
    finally:
        if not sharded:  # a sharded batch's files are its shards' business until it ends
            _leftovers_discard(batch, folder=folder, parts=parts, source=source)


def _leftovers_discard(batch: BatchJob, *, folder: Path, parts: tuple[Path, Path],
                       source: Path | None) -> None:
    """The local copy, the upload and the checkpoint: none outlives its batch (idempotent)."""
    if source is not None:
        source.unlink(missing_ok=True)
    storage.input_discard(batch.input_path)
    checkpoint.checkpoint_discard(folder=folder, parts=parts)
