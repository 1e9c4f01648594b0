"""Batch writes: create (store the input, send the task), cancel, delete, and reap the ones whose
worker died. ``batch_job_run`` (runner.py) is what the inference worker executes.

Create, cancel and delete ask projects.policy here, not in the views, so the page, the API and
the shell get the same refusal; each records its line in the project's activity log."""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import timedelta
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from classification.batches import checkpoint, shard_reaper, storage
from classification.batches.lifecycle import (
    batch_job_claim,
    batch_job_fail_to_start,
    batch_job_finish,
)
from classification.batches.runner import BatchFileError, batch_job_run
from classification.batches.shards import SHARD_TASK, batch_shards_work
from classification.mlmodels.explanations import explainable
from classification.mlmodels.thresholds import mlmodel_threshold_check
from classification.models import BatchJob, MLModel
from core import broker, filestore, processes
from core.queueing import QueueUnavailable, task_send_on_commit
from projects import policy
from projects.services import activity_record

logger = logging.getLogger(__name__)

S = BatchJob.Status
# The Celery task a batch's message names (classification/tasks.py registers it under this).
BATCH_TASK = "classification.tasks.batch_job_run"

__all__ = [
    "SHARD_TASK",
    "BatchError",
    "BatchFileError",
    "batch_job_cancel",
    "batch_job_claim",
    "batch_job_create",
    "batch_job_create_from_records",
    "batch_job_delete",
    "batch_job_finish",
    "batch_job_run",
    "batch_jobs_reap",
    "batch_jobs_reconcile_on_worker_start",
    "batch_shards_work",
]


class BatchError(ValueError):
    """The request cannot become a batch; the message is for the person."""


def _check(*, ml_model: MLModel, size: int | None, top_terms: bool, threshold: str) -> None:
    if not ml_model.is_trained:
        raise BatchError("Train the model before classifying with it.")
    try:  # refused here, not by the worker: nothing is stored or queued for it
        mlmodel_threshold_check(ml_model=ml_model, threshold=threshold)
    except ValueError as exc:
        raise BatchError(str(exc)) from exc
    if top_terms and not explainable(ml_model):
        raise BatchError(f"Top terms are not available for {ml_model.model_type} models: their "
                         "predictions cannot be explained word by word.")
    if size is not None and size > settings.MAX_UPLOAD_SIZE:
        raise BatchError(f"The file is {size / 2**20:.1f} MB; the limit is "
                         f"{settings.MAX_UPLOAD_SIZE / 2**20:.0f} MB.")


def _batch_job_start(
    *, owner: Any, ml_model: MLModel, filename: str, write: Callable[[IO[bytes]], None],
    top_terms: bool, threshold: str,
) -> BatchJob:
    """Store the input atomically, create the queued row, send the task once that commits.

    The file is complete on disk before the row exists, so a worker never sees a half file;
    if anything fails before the commit, the folder goes with it. `owner` is who asks (and is
    recorded as the batch's creator); the batch joins the model's project.
    """
    batch = BatchJob(owner=owner, ml_model=ml_model, project_id=ml_model.project_id,
                     filename=filename, top_terms=top_terms, threshold=threshold,
                     celery_task_id=str(uuid.uuid4()))
    folder = storage.batch_folder(owner_id=owner.pk, batch_id=batch.pk)
    try:
        source = storage.input_store(folder=folder, filename=filename, write=write)
        batch.input_path = storage.relative(source)
        with transaction.atomic():
            batch.save(force_insert=True)
            activity_record(project=batch.project_id, actor=owner, verb="batch_created",
                            subject=batch, summary=f"{_who(owner)} started classifying "
                            f"“{filename}” with “{ml_model.name}”", filename=filename,
                            model=ml_model.name)
            _send_on_commit(batch)
    except BaseException:
        # A refused message has already failed the row (and removed the folder); any other
        # error leaves no row, so nothing must stay on disk either.
        storage.remove_folder(folder)
        raise
    return batch


def _send_on_commit(batch: BatchJob) -> None:
    batch_id, folder = batch.pk, storage.absolute(batch.input_path).parent

    def unreachable(reason: str) -> None:
        # Runs after the commit: the row exists, so it is failed rather than left queued for
        # a message that was never sent, and its input is not kept.
        batch_job_fail_to_start(batch_id=batch_id, reason=reason)
        storage.remove_folder(folder)

    task_send_on_commit(name=BATCH_TASK, args=(batch_id.hex,), task_id=batch.celery_task_id,
                        on_unreachable=unreachable)


def batch_job_create(
    *, owner: Any, ml_model: MLModel, uploaded_file: Any, top_terms: bool = False,
    threshold: str = "f1",
) -> BatchJob:
    """A queued batch for an uploaded file of articles (any format the dataset import reads).

    Raises BatchError for a request that cannot be a batch, core.diskspace.DiskFull when the
    disk fills while the file is stored (no row, no file), and core.queueing.QueueUnavailable
    when the broker refuses the message (the row is then failed and its file removed), and
    RoleRequired when `owner` may not classify in the model's project. `threshold`: "f1" or
    "recall" (a model without recall thresholds is refused with BatchError).
    """
    policy.require(user=owner, action=policy.Action.CLASSIFY, obj=ml_model)
    _check(ml_model=ml_model, size=uploaded_file.size, top_terms=top_terms, threshold=threshold)
    filename = Path(uploaded_file.name or "articles").name[:200] or "articles"

    def write(out: IO[bytes]) -> None:
        for chunk in uploaded_file.chunks():  # streamed: a large upload never sits in memory
            out.write(chunk)

    return _batch_job_start(owner=owner, ml_model=ml_model, filename=filename, write=write,
                            top_terms=top_terms, threshold=threshold)


def batch_job_create_from_records(
    *, owner: Any, ml_model: MLModel, records: Iterable[dict[str, str]], filename: str,
    top_terms: bool = False, threshold: str = "f1",
) -> BatchJob:
    """A queued batch for articles given as data, e.g. ``{"title": .., "abstract": ..}`` or
    ``{"text": ..}`` each; they are written as JSONL, which the batch reader reads as any
    upload."""
    policy.require(user=owner, action=policy.Action.CLASSIFY, obj=ml_model)
    _check(ml_model=ml_model, size=None, top_terms=top_terms, threshold=threshold)

    def write(out: IO[bytes]) -> None:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n")

    return _batch_job_start(owner=owner, ml_model=ml_model, filename=f"{filename}.jsonl",
                            write=write, top_terms=top_terms, threshold=threshold)


def batch_job_cancel(*, batch: BatchJob, actor: Any = None) -> BatchJob:
    """A queued batch ends now; a running one stops between two chunks (about a second).

    `actor` (the user asking) is recorded in the batch's history when it ends here; a running
    batch's cancelled row is written by its worker, so that one is the system's. RoleRequired
    unless `actor` may cancel in the batch's project (None: the system or an operator's shell).
    """
    if actor is not None:
        policy.require(user=actor, action=policy.Action.CANCEL, obj=batch)
    now = timezone.now()
    if BatchJob.objects.transition(
        batch.pk, source=S.QUEUED, target=S.CANCELLED, cancel_requested=True,
        reason="Cancelled before the inference worker started it.", finished_at=now,
        actor=actor,
    ):
        # Its message may still be delivered: the claim then finds it cancelled and stops.
        storage.input_discard(batch.input_path)
        if batch.input_path:  # a resumed batch's results so far
            folder = storage.absolute(batch.input_path).parent
            checkpoint.checkpoint_discard(folder=folder,
                                          parts=checkpoint.result_parts(folder=folder))
    else:
        BatchJob.objects.filter(pk=batch.pk, status=S.RUNNING).update(
            cancel_requested=True, updated_at=now
        )
    batch.refresh_from_db()
    if batch.cancel_requested:  # not when it had already ended: nothing was cancelled
        activity_record(project=batch.project_id, actor=actor, verb="batch_cancelled",
                        subject=batch, summary=f"{_who(actor)} cancelled the batch "
                        f"“{batch.filename}”", filename=batch.filename)
    return batch


def batch_job_delete(*, batch: BatchJob, actor: Any = None) -> None:
    """Delete a finished batch now (its review goes with it) and its files once that commits.

    Refused (BatchError) while it is queued or running: its worker would write into the folder
    this removes; cancel it first. RoleRequired unless `actor` may delete in its project.
    """
    if actor is not None:
        policy.require(user=actor, action=policy.Action.DELETE, obj=batch)
    if BatchJob.objects.filter(pk=batch.pk, status__in=BatchJob.ACTIVE_STATUSES).exists():
        raise BatchError("Cancel the batch before deleting it: it is still being classified.")
    folder = storage.batch_folder(owner_id=batch.owner_id, batch_id=batch.pk)
    shared = storage.published_names(input_path=batch.input_path, result_path=batch.result_path)

    def remove_files() -> None:
        storage.remove_folder(folder)
        for name in shared:
            filestore.file_delete(name=name)

    with transaction.atomic():
        activity_record(project=batch.project_id, actor=actor, verb="batch_deleted",
                        summary=f"{_who(actor)} deleted the batch “{batch.filename}”",
                        filename=batch.filename, batch=batch.pk.hex)
        BatchJob.objects.filter(pk=batch.pk).delete()
        transaction.on_commit(remove_files)


def _who(user: Any) -> str:
    return user.get_username() if user is not None else "The system"


# --- Reaping ------------------------------------------------------------------------------------


def _worker_alive(batch: BatchJob) -> bool:
    return processes.pid_alive_since(batch.worker_pid, started_at=batch.started_at)


def _counted(batch: BatchJob) -> str:
    if batch.total is None:
        return "while it was reading the file"
    return f"after {batch.processed} of {batch.total} articles"


MAX_RESUMES = 3  # a file that kills its worker every time must end, not loop
RESTARTED = "killed or restarted"


def _fail_orphan(batch: BatchJob, *, why: str, resumes: int = 0) -> bool:
    then = (f"it was resumed {resumes} times and its worker stopped each time (see "
            "logs/celery_inference.log); upload the file again." if resumes
            else "upload the file again.")
    reason = f"The inference worker stopped while classifying ({why}) {_counted(batch)}; {then}"
    if not batch_job_finish(batch_id=batch.pk, target=S.FAILED, reason=reason):
        return False
    # The runner that would have tidied up is gone: its input and half-written result go too.
    if batch.input_path:
        folder = storage.absolute(batch.input_path).parent
        storage.input_discard(batch.input_path)
        checkpoint.checkpoint_discard(folder=folder, parts=checkpoint.result_parts(folder=folder))
    return True


def _resume_orphan(batch: BatchJob, *, why: str) -> bool:
    """running -> queued, and its task sent again: the next run carries on after the last
    completed chunk (checkpoint.py). Only while its input is still here and it has been resumed
    fewer than MAX_RESUMES times; False leaves the row running, for _fail_orphan."""
    folder = storage.absolute(batch.input_path).parent
    if not (storage.absolute(batch.input_path).is_file() or filestore.shared_enabled()):
        return False
    if batch.status_changes.filter(source=S.RUNNING, target=S.QUEUED).count() >= MAX_RESUMES:
        return False
    point = checkpoint.checkpoint_read(folder=folder)
    where = (f"it resumes after article {point.rows}, its last completed chunk" if point
             else "it starts again from the first article (no chunk was complete)")
    batch.celery_task_id = str(uuid.uuid4())
    try:
        with transaction.atomic():
            if not BatchJob.objects.transition(
                batch.pk, source=S.RUNNING, target=S.QUEUED, celery_task_id=batch.celery_task_id,
                reason=f"The inference worker stopped while classifying ({why}) "
                       f"{_counted(batch)}; {where}.",
                processed=point.processed if point else 0, skipped=point.skipped if point else 0,
            ):
                return False
            _send_on_commit(batch)
    except QueueUnavailable:
        logger.warning("batch %s: not resumed, the broker refused its message", batch.pk)
    return True  # resumed, or failed by _send_on_commit: either way this batch is dealt with


def _orphan_end(batch: BatchJob, *, why: str) -> str | None:
    """A batch whose worker on this host is dead: resumed if it can be, else failed."""
    if batch.input_path and _resume_orphan(batch, why=why):
        return "resumed"
    resumes = batch.status_changes.filter(source=S.RUNNING, target=S.QUEUED).count()
    resumes = resumes if resumes >= MAX_RESUMES else 0  # else it failed for want of its input
    return "failed" if _fail_orphan(batch, why=why, resumes=resumes) else None


def batch_jobs_reconcile_on_worker_start() -> list[str]:
    """At a worker's start: running batches of this host whose worker process is dead are
    resumed (or failed, see _orphan_end), and sharded batches' shards whose worker on this host
    is dead are queued again (shard_reaper.py); their ids.

    Only dead workers: a live inference worker beside this one (or this one, if it already
    claimed a batch) keeps its batches.
    """
    host, ended = processes.hostname(), []
    for batch in BatchJob.objects.filter(status=S.RUNNING, shard_count__gt=0):
        # A sharded batch's shards run on any host: this host's dead ones go back to the queue.
        if outcome := shard_reaper.batch_shards_reap(batch=batch, stale_seconds=None):
            logger.warning("worker start: batch %s %s (a shard's worker is gone)", batch.pk,
                           outcome)
            ended.append(batch.pk.hex)
    for batch in BatchJob.objects.filter(status=S.RUNNING, worker_host=host, shard_count=0):
        if not _worker_alive(batch) and (outcome := _orphan_end(batch, why=RESTARTED)):
            logger.warning("worker start: batch %s %s (its worker is gone)", batch.pk, outcome)
            ended.append(batch.pk.hex)
    return ended


def batch_jobs_reap(*, stale_seconds: float) -> list[str]:
    """Resume or fail batches that can make no more progress; remove week-old batches.

    Running batches whose worker is gone: on this host, its worker process is dead (resumed
    from its checkpoint, or failed: _orphan_end); on another host (which this one cannot
    inspect, nor prove its worker dead, nor read its checkpoint), no progress write for
    `stale_seconds` (failed). Queued batches older than `stale_seconds` whose task message the
    broker (Redis) no longer holds (failed). Returns the ids resumed or failed. Safe to run
    from a schedule: a second run finds nothing more to do.
    """
    host, now, ended = processes.hostname(), timezone.now(), []
    for batch in BatchJob.objects.filter(status=S.RUNNING).order_by("created_at"):
        if batch.shard_count:  # its shards are reaped one by one; the batch stays running
            if shard_reaper.batch_shards_reap(batch=batch, stale_seconds=stale_seconds):
                ended.append(batch.pk.hex)
            continue
        if batch.worker_host == host:
            outcome = None if _worker_alive(batch) else _orphan_end(batch, why=RESTARTED)
            if outcome:
                logger.warning("reaper: batch %s %s (its worker is gone)", batch.pk, outcome)
                ended.append(batch.pk.hex)
            continue
        age = (now - batch.updated_at).total_seconds()
        why = f"no progress from {batch.worker_host or 'its worker'} for {age:.0f} s"
        if age > stale_seconds and _fail_orphan(batch, why=why):
            ended.append(batch.pk.hex)
    ended += _fail_lost_messages(stale_seconds=stale_seconds)
    if ended:
        logger.warning("reaper: resumed or failed batches %s (their worker or message is "
                       "gone)", ended)
    _purge_old()
    return ended


LOST_MESSAGE_REASON = (
    "The job queue lost this batch's message (Redis restarted or was flushed), so no worker "
    "would ever start it; upload the file again."
)

LOST_MESSAGE_GRACE_SECONDS = 1.0


def _fail_lost_messages(*, stale_seconds: float) -> list[str]:
    """Queued batches older than `stale_seconds` whose message the broker no longer holds."""
    cutoff = timezone.now() - timedelta(seconds=stale_seconds)
    # updated_at too: a batch resumed just now was created long ago, and its new message may
    # not be in the broker yet.
    waiting = list(BatchJob.objects.filter(status=S.QUEUED, created_at__lt=cutoff,
                                           updated_at__lt=cutoff))
    held = broker.broker_task_ids(queue=settings.QUEUE_INFERENCE) if waiting else None
    if held is None:
        return []
    lost = [batch for batch in waiting if batch.celery_task_id not in held]
    if lost:
        # A worker acks the message just before it claims the row; a moment's wait lets such
        # a claim land, and the transition below then leaves that batch alone.
        time.sleep(LOST_MESSAGE_GRACE_SECONDS)
    failed = []
    for batch in lost:
        if batch_job_fail_to_start(batch_id=batch.pk, reason=LOST_MESSAGE_REASON):
            storage.input_discard(batch.input_path)
            failed.append(batch.pk.hex)
    return failed


def _purge_old() -> None:
    """Finished batches older than a week go, rows and files; so do folders without a row."""
    cutoff = timezone.now() - timedelta(seconds=storage.KEEP_SECONDS)
    old = BatchJob.objects.exclude(status__in=BatchJob.ACTIVE_STATUSES).filter(
        created_at__lt=cutoff
    )
    for batch in old.only("id", "owner_id", "input_path", "result_path"):
        storage.remove_folder(storage.batch_folder(owner_id=batch.owner_id, batch_id=batch.pk))
        for name in storage.published_names(input_path=batch.input_path,
                                            result_path=batch.result_path):
            filestore.file_delete(name=name)
    old.delete()
    root = storage.batches_root()
    if not root.is_dir():
        return
    active = {b.hex for b in BatchJob.objects.active().values_list("id", flat=True)}
    oldest = time.time() - storage.KEEP_SECONDS
    for owner_folder in root.iterdir():
        if not owner_folder.is_dir():
            continue
        for folder in owner_folder.iterdir():
            if folder.name not in active and folder.stat().st_mtime < oldest:
                storage.remove_folder(folder)
