"""A large batch run by every live inference worker at once: cut into shards, each classified
on its own, the results assembled in file order.

Why shard rows claimed from the database rather than a Celery group or chord: a message is only
a wake-up call ("batch X has work"), and which shard a worker runs is decided by a conditional
UPDATE on its BatchShard row (queued -> running). A worker killed with SIGKILL takes nothing
with it that the database does not show: its shard stays `running` under a token naming a dead
process, which the reaper (or the next worker's start) puts back to `queued`, and any worker
still looping over the batch, or woken by the message the reaper sends, carries it on from its
checkpoint. A chord would have tied each shard to one message (acked on receipt here, so a
killed worker's is gone, or, with acks_late, back only after Redis's visibility timeout) and
the assembly to Celery's result backend, which this project never trusts with a job's truth.

Life of a sharded batch (the BatchJob stays `running` throughout):

1. The worker that claimed the batch counts its articles (runner.py) and, for more than
   BATCH_SHARD_ROWS (or enough for every live inference worker to take a share), records
   `shard_count` and takes the lead (`BatchJob.leader`).
2. The leader reads the file once more and writes each shard's articles as gzipped JSON Lines
   (`shards/<index>/input.jsonl.gz`); as each one is whole, its row is created and a message
   sent, so other workers start before the cut is done. Then the upload is deleted.
3. Every worker that gets a message loops: claim the lowest queued shard, classify it into its
   own result parts with a checkpoint after each chunk (checkpoint.py, in the shard's folder),
   publish them, mark it completed; until no shard is left.
4. The worker that finds every shard completed takes the lead and streams the header and the
   shards' parts, in shard order, into the batch's result.csv and result.jsonl.

A shard that fails runs again (from its checkpoint) until it has had MAX_ATTEMPTS; then the
batch fails with a reason naming it. Progress is the sum of the shards' own. Test-only fault
`batch_shard_error=<index>` makes that shard raise on every attempt.
"""

from __future__ import annotations

import contextlib
import gzip
import itertools
import json
import logging
import os
import shutil
import time
import uuid
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F, OuterRef, Subquery, Sum
from django.utils import timezone

from classification import faults
from classification.batches import checkpoint, lifecycle, packing, runner, storage
from classification.models import BatchJob, BatchShard
from core import filestore
from core.queueing import QueueUnavailable, task_send_on_commit
from dataset_management.articles import Article

logger = logging.getLogger(__name__)

S, H = BatchJob.Status, BatchShard.Status
SHARD_TASK = "classification.tasks.batch_shards_run"  # registered in classification/tasks.py
MAX_ATTEMPTS = 3  # a shard that kills or fails its worker every time must end, not loop
# "Large enough" to give every live worker a share: at least two chunks each.
MIN_ROWS_PER_WORKER = 2 * packing.WINDOW
INPUT_NAME = "input.jsonl.gz"


def shard_plan(*, total: int) -> int:
    """How many shards a batch of `total` articles is cut into (1: run it in one piece)."""
    rows = max(1, int(settings.BATCH_SHARD_ROWS))
    count = -(-total // rows)
    count = max(count, min(_live_slots(), total // MIN_ROWS_PER_WORKER))
    if count <= 1:
        return 1
    return -(-total // -(-total // count))  # no empty shard at the end


def _live_slots() -> int:
    from core import selectors

    [coverage] = selectors.worker_queue_coverage(queues=[settings.QUEUE_INFERENCE])
    return sum(max(1, worker.concurrency) for worker in coverage.live)


def shard_bounds(*, total: int, count: int, index: int) -> tuple[int, int]:
    size = -(-total // count)
    return index * size + 1, min((index + 1) * size, total)


def shard_name(batch: BatchJob, shard: BatchShard) -> str:
    return (f"shard {shard.index + 1} of {batch.shard_count} (articles {shard.first_row:,}"
            f"-{shard.last_row:,})")


def _cancelled(batch: BatchJob, when: str = "") -> str:
    counts = _sums(batch)
    return f"Cancelled {when or 'after'} {counts['processed']} of {batch.total or 0} articles."


def _shards_root(batch: BatchJob) -> Path:
    return storage.batch_folder(owner_id=batch.owner_id, batch_id=batch.pk) / "shards"


def shard_folder(batch: BatchJob, index: int) -> Path:
    return _shards_root(batch) / f"{index:05d}"


def wake_send(batch_id: uuid.UUID) -> None:
    """Wake a worker for this batch; any number of these may be in flight, each harmless."""
    def unreachable(reason: str) -> None:
        logger.warning("batch %s: no wake-up sent for its shards (%s); the workers already "
                       "on it, or the reaper, carry on", batch_id, reason)

    # Outside a transaction the send runs at once and raises; the callback has said it.
    with contextlib.suppress(QueueUnavailable):
        task_send_on_commit(name=SHARD_TASK, args=(batch_id.hex,),
                            task_id=f"{batch_id.hex}-{uuid.uuid4().hex[:12]}",
                            on_unreachable=unreachable)


# --- Cutting the file -----------------------------------------------------------------------


class _Beat:
    """The leader's heartbeat on the batch row, which also brings back a cancel request."""

    def __init__(self, batch_id: uuid.UUID, token: str) -> None:
        self.batch_id, self.token, self.last = batch_id, token, 0.0

    def __call__(self, *, force: bool = False) -> None:
        if not force and time.monotonic() - self.last < float(settings.PROGRESS_WRITE_INTERVAL):
            return
        self.last = time.monotonic()
        if BatchJob.objects.filter(pk=self.batch_id, status=S.RUNNING, cancel_requested=False,
                                   leader=self.token).update(updated_at=timezone.now()):
            return
        row = BatchJob.objects.filter(pk=self.batch_id).values("status", "leader").first()
        if row and row["status"] == S.RUNNING and row["leader"] == self.token:
            raise runner.Cancelled()
        raise runner.EndedElsewhere(row["status"] if row else "deleted")


def batch_shards_start(*, batch: BatchJob, source: Path, count: int) -> str | None:
    """Cut a claimed, counted batch into `count` shards, then work on them like any worker."""
    token = lifecycle.worker_token()
    if not BatchJob.objects.filter(pk=batch.pk, status=S.RUNNING, shard_count=0).update(
            shard_count=count, leader=token, updated_at=timezone.now()):
        return None
    batch.refresh_from_db()
    return _cut(batch, source=source, token=token) or batch_shards_work(batch_id=batch.pk)


def _cut(batch: BatchJob, *, source: Path | None, token: str) -> str | None:
    """The leader's cut, from the first shard not yet written; None once it is done."""
    try:
        # The leader that died may have been on another node: fetch the upload from there.
        source = source or filestore.file_local(name=batch.input_path)
        _shards_write(batch, source=source, beat=_Beat(batch.pk, token))
        lifecycle.batch_job_unlead(batch_id=batch.pk, token=token)
    except runner.Cancelled:
        return batch_end(batch, target=S.CANCELLED, reason="Cancelled while the file was cut.")
    except runner.EndedElsewhere as exc:
        logger.warning("batch %s ended elsewhere (%s); stopping", batch.pk, exc)
        return None
    except Exception as exc:
        return batch_end(batch, target=S.FAILED, reason=runner.failure_reason(exc), exc=exc)
    # Every article is in a shard's input now: the upload is not kept.
    if source is not None:
        source.unlink(missing_ok=True)
    storage.input_discard(batch.input_path)
    return None


def _shards_write(batch: BatchJob, *, source: Path, beat: _Beat) -> None:
    total, count = int(batch.total or 0), batch.shard_count
    done = batch.shards.count()  # a row exists only once its input is whole
    skip = shard_bounds(total=total, count=count, index=done - 1)[1] if done else 0
    with runner.batch_articles(batch, source) as stream:
        if not batch.shard_layout:
            batch.shard_layout = runner.stream_layout(stream)
            BatchJob.objects.filter(pk=batch.pk).update(shard_layout=batch.shard_layout)
        articles = iter(stream)
        for _ in itertools.islice(articles, skip):
            beat()
        for index in range(done, count):
            first, last = shard_bounds(total=total, count=count, index=index)
            folder = shard_folder(batch, index)
            folder.mkdir(parents=True, exist_ok=True)
            part, written = folder / f"{INPUT_NAME}.part", 0
            # Level 1: the cut is one reader's pass; smaller files are a bonus, not a goal.
            with gzip.open(part, "wt", encoding="utf-8", compresslevel=1) as out:
                for article in itertools.islice(articles, last - first + 1):
                    beat()
                    out.write(json.dumps(
                        [article.row, article.title, article.abstract, article.text,
                         article.identifiers, article.citation, article.record,
                         article.problem], ensure_ascii=False, default=str) + "\n")
                    written += 1
            if written < last - first + 1:
                raise runner.BatchFileError(
                    f"the file holds fewer articles than counted ({total})")
            _shard_add(batch, index=index, rows=(first, last), part=part)


def _shard_add(batch: BatchJob, *, index: int, rows: tuple[int, int], part: Path) -> None:
    path = part.with_name(INPUT_NAME)
    os.replace(part, path)
    filestore.file_publish(name=storage.relative(path))
    with transaction.atomic():
        BatchShard.objects.create(batch=batch, index=index, first_row=rows[0], last_row=rows[1],
                                  input_path=storage.relative(path))
        wake_send(batch.pk)


# --- Working on the shards ------------------------------------------------------------------


def batch_shards_work(*, batch_id: uuid.UUID | str) -> str | None:
    """What a woken worker does for a sharded batch: run queued shards until none is left,
    then assemble if every shard is done. The batch's final status when this call ended it."""
    token = lifecycle.worker_token()
    while True:
        batch = BatchJob.objects.select_related("ml_model").filter(pk=batch_id).first()
        if batch is None or batch.status != S.RUNNING or not batch.shard_count:
            return None
        if batch.cancel_requested:
            return batch_end(batch, target=S.CANCELLED, reason=_cancelled(batch))
        if batch.shards.count() < batch.shard_count and lifecycle.batch_job_lead(
                batch_id=batch.pk, token=token):
            # Counted again under the lead: a live leader may have written its last shard,
            # given the lead back and deleted the upload since the count above.
            if batch.shards.count() >= batch.shard_count:
                lifecycle.batch_job_unlead(batch_id=batch.pk, token=token)
                continue
            # Its leader died while cutting the file: carry the cut on from the last shard.
            if outcome := _cut(batch, source=None, token=token):
                return outcome
            continue
        shard = _claim(batch, token)
        if shard is not None:
            if outcome := _shard_run(batch, shard, token):
                return outcome
            continue
        done = batch.shards.filter(status=H.COMPLETED).count()
        if done == batch.shard_count and lifecycle.batch_job_lead(batch_id=batch.pk, token=token):
            return _assemble(batch, token)
        return None


def _claim(batch: BatchJob, token: str) -> BatchShard | None:
    while (shard := batch.shards.filter(status=H.QUEUED).order_by("index").first()) is not None:
        if BatchShard.objects.transition(shard.pk, source=H.QUEUED, target=H.RUNNING,
                                         worker=token, attempts=F("attempts") + 1, reason=""):
            shard.refresh_from_db()
            return shard
    return None


class _ShardProgress(runner.Progress):
    """The shard's own counts on its row, and the batch's as the sum over its shards."""

    def __init__(self, batch_id: uuid.UUID, *, shard: BatchShard, token: str) -> None:
        super().__init__(batch_id)
        self.shard, self.token = shard, token

    def write(self) -> bool:
        now = timezone.now()
        if not BatchShard.objects.filter(pk=self.shard.pk, status=H.RUNNING,
                                         worker=self.token).update(
                processed=self.processed, skipped=self.skipped, updated_at=now):
            raise runner.EndedElsewhere("its shard was given to another worker")
        return sums_write(self.batch_id)


def sums_write(batch_id: uuid.UUID) -> bool:
    shards = BatchShard.objects.filter(batch=OuterRef("pk")).order_by().values("batch")
    return bool(BatchJob.objects.filter(pk=batch_id, status=S.RUNNING,
                                        cancel_requested=False).update(
        processed=Subquery(shards.annotate(n=Sum("processed")).values("n")),
        skipped=Subquery(shards.annotate(n=Sum("skipped")).values("n")),
        updated_at=timezone.now()))


def _shard_run(batch: BatchJob, shard: BatchShard, token: str) -> str | None:
    """Run one claimed shard; None to carry on with the next, else the batch's end."""
    folder = shard_folder(batch, shard.index)
    folder.mkdir(parents=True, exist_ok=True)
    parts = checkpoint.result_parts(folder=folder)
    progress = _ShardProgress(batch.pk, shard=shard, token=token)
    try:
        if faults.active_faults().get("batch_shard_error") == str(shard.index):
            raise RuntimeError(f"injected fault in shard {shard.index + 1}")
        source = filestore.file_local(name=shard.input_path)
        resume = checkpoint.checkpoint_resume(
            folder=folder, parts=parts, model=checkpoint.model_fingerprint(batch.ml_model))
        _shard_classify(batch, shard, source=source, parts=parts, progress=progress,
                        resume=resume)
        os.replace(parts[1], folder / storage.RECORDS_NAME)
        os.replace(parts[0], folder / storage.RESULT_NAME)
        storage.results_publish(folder=folder)
        checkpoint.checkpoint_discard(folder=folder, parts=parts)
        progress.report(force=True)
        BatchShard.objects.filter(worker=token).transition(
            shard.pk, source=H.RUNNING, target=H.COMPLETED, processed=progress.processed,
            skipped=progress.skipped)
        return None
    except runner.Cancelled:
        return batch_end(batch, target=S.CANCELLED, reason=_cancelled(batch))
    except runner.EndedElsewhere as exc:
        logger.warning("batch %s, %s: stopping (%s)", batch.pk, shard_name(batch, shard), exc)
        return None
    except Exception as exc:
        return _shard_failed(batch, shard, token=token, exc=exc)


def _shard_article(line: str) -> Article:
    row, title, abstract, text, identifiers, citation, record, problem = json.loads(line)
    return Article(row, title, abstract, text, "", "", identifiers, citation, record, problem)


def _shard_classify(batch: BatchJob, shard: BatchShard, *, source: Path,
                    parts: tuple[Path, Path], progress: runner.Progress,
                    resume: checkpoint.Checkpoint | None) -> None:
    """runner._classify for one shard: rows numbered in the whole file, no header."""
    ml_model = batch.ml_model
    done = resume.rows if resume else 0
    if resume:
        progress.processed, progress.skipped = resume.processed, resume.skipped
    progress.report(force=True)
    delay, size = runner.chunk_delay(), runner.window_size()
    model = checkpoint.model_fingerprint(ml_model)
    mode = "a" if resume else "w"
    with (gzip.open(source, "rt", encoding="utf-8") as lines,
          parts[0].open(mode, encoding="utf-8", newline="") as csv_out,
          parts[1].open(mode, encoding="utf-8") as records_out):
        outputs = runner.batch_outputs(batch, csv_out, records_out, layout=batch.shard_layout,
                                       header=False)  # with the batch's threshold
        window: list[tuple[int, Article]] = []
        for offset, line in enumerate(lines, start=1):
            if offset <= done:
                continue
            window.append((shard.first_row + offset - 1, _shard_article(line)))
            if len(window) >= size:
                runner.write_window(outputs, window, ml_model, progress, delay)
                window = []
                checkpoint.checkpoint_write(
                    folder=parts[0].parent, parts=(csv_out, records_out), rows=offset,
                    processed=progress.processed, skipped=progress.skipped, model=model)
        runner.write_window(outputs, window, ml_model, progress, delay)
        for out in (csv_out, records_out):
            out.flush()
            os.fsync(out.fileno())


def _shard_failed(batch: BatchJob, shard: BatchShard, *, token: str,
                  exc: Exception) -> str | None:
    """Run it again (from its checkpoint) while it has attempts left; else the batch fails."""
    reason = runner.failure_reason(exc)
    retry = shard.attempts < MAX_ATTEMPTS and not reason.startswith("Could not read")
    mine = BatchShard.objects.filter(worker=token)
    if retry and mine.transition(shard.pk, source=H.RUNNING, target=H.QUEUED, worker="",
                                 reason=reason[:4000]):
        logger.warning("batch %s, %s: attempt %d failed, queued again: %s", batch.pk,
                       shard_name(batch, shard), shard.attempts, reason, exc_info=exc)
        return None
    if not mine.transition(shard.pk, source=H.RUNNING, target=H.FAILED, reason=reason[:4000]):
        return None  # the reaper took it from us meanwhile
    tries = f" after {shard.attempts} attempts" if shard.attempts > 1 else ""
    return batch_end(batch, target=S.FAILED, exc=exc, reason=(
        f"The {shard_name(batch, shard)} could not be classified{tries}: {reason}"))


# --- Assembling, ending, tidying --------------------------------------------------------------


def _assemble(batch: BatchJob, token: str) -> str | None:
    """The header, then every shard's parts in shard order: the batch's two result files."""
    folder = storage.batch_folder(owner_id=batch.owner_id, batch_id=batch.pk)
    parts, beat = checkpoint.result_parts(folder=folder), _Beat(batch.pk, token)
    try:
        with (parts[0].open("w", encoding="utf-8-sig", newline="") as csv_out,
              parts[1].open("w", encoding="utf-8") as records_out):
            runner.Outputs(csv_out, records_out, labels=list(batch.ml_model.label_names),
                           layout=batch.shard_layout, top_terms=batch.top_terms, header=True)
        with parts[0].open("ab") as csv_out, parts[1].open("ab") as records_out:
            for shard in batch.shards.order_by("index"):
                here = shard_folder(batch, shard.index)
                for out, name in ((csv_out, storage.RESULT_NAME),
                                  (records_out, storage.RECORDS_NAME)):
                    local = filestore.file_local(name=storage.relative(here / name))
                    with local.open("rb") as piece:
                        shutil.copyfileobj(piece, out, 1 << 20)
                beat(force=True)
            for out in (csv_out, records_out):
                out.flush()
                os.fsync(out.fileno())
        result = runner.results_publish(folder=folder, parts=parts)
    except runner.Cancelled:
        return batch_end(batch, target=S.CANCELLED, reason="Cancelled while the results were "
                          "assembled.")
    except runner.EndedElsewhere:
        return None
    except Exception as exc:
        return batch_end(batch, target=S.FAILED, reason=runner.failure_reason(exc), exc=exc)
    counts = _sums(batch)
    batch_shards_discard(batch)  # before "completed": whoever sees it finished finds results
    ended = lifecycle.batch_job_finish(batch_id=batch.pk, target=S.COMPLETED, leader="",
                                       result_path=storage.relative(result), **counts)
    return S.COMPLETED if ended else None


def _sums(batch: BatchJob) -> dict[str, int]:
    sums = batch.shards.order_by().aggregate(processed=Sum("processed"), skipped=Sum("skipped"))
    return {key: int(value or 0) for key, value in sums.items()}


def batch_end(batch: BatchJob, *, target: str, reason: str,
               exc: Exception | None = None) -> str | None:
    """End a sharded batch early (cancelled or failed) and remove every file it had."""
    counts = _sums(batch)
    if exc is not None and "Classification stopped" in reason:
        logger.error("batch %s failed", batch.pk, exc_info=exc)  # a bug, not a bad file
    ended = lifecycle.batch_job_finish(batch_id=batch.pk, target=target, reason=reason,
                                       leader="", **counts)
    if ended:
        batch_shards_discard(batch)
    return target if ended else None


def batch_shards_discard(batch: BatchJob) -> None:
    """Shard inputs and results, here and on the shared storage, the upload and any half-made
    result: none outlives the batch (idempotent)."""
    for shard in batch.shards.all():
        folder = Path(shard.input_path).parent
        for name in (shard.input_path, str(folder / storage.RESULT_NAME),
                     str(folder / storage.RECORDS_NAME)):
            filestore.file_delete(name=name)
    storage.remove_folder(_shards_root(batch))
    storage.input_discard(batch.input_path)
    folder = storage.batch_folder(owner_id=batch.owner_id, batch_id=batch.pk)
    checkpoint.checkpoint_discard(folder=folder, parts=checkpoint.result_parts(folder=folder))
