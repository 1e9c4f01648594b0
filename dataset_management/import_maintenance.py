"""Beat's maintenance step for imports nobody is finishing (core.registry, see apps.py).

An import whose worker died (killed, restarted: its heartbeat went silent) or whose message the
broker lost (Redis restarted empty, or was flushed) still has its upload on disk, so it is
queued again, once, and the reason is recorded on the row (options["retried"] and its message):
the person does not have to upload the file again. Found so a second time, it is failed with
the reason and its upload removed, as before, so a file that kills its worker is not retried
for ever. Then the working folders such imports left under MEDIA_ROOT/datasets are removed.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils import timezone

from core import broker, queueing

from .import_restarts import MESSAGE_LOST, WORKER_STOPPED, import_restart_options
from .imports import TASK, _input_discard
from .models import ImportJob

logger = logging.getLogger(__name__)
S = ImportJob.Status

# A running import writes its heartbeat every PROGRESS_INTERVAL while it reads and at each
# later phase (splitting 2,000,000 rows takes well under a minute); five minutes of silence
# means its worker is gone.
STALE_SECONDS = 300
LOST_MESSAGE_REASON = (
    "The job queue lost this import's message (Redis restarted or was flushed), so no worker "
    "would ever start it; nothing was saved. Upload the file again."
)


def import_jobs_fail_stale(*, stale_seconds: float = STALE_SECONDS) -> str:
    """Retry once, else fail, the imports whose worker died or whose message was lost; then
    remove abandoned working folders. Idempotent. Returns what it did, for the log."""
    cutoff = timezone.now() - timedelta(seconds=stale_seconds)
    retried = failed = 0
    for job in ImportJob.objects.filter(status=S.RUNNING, heartbeat_at__lt=cutoff):
        why = (f"its worker stopped (killed or restarted) after {job.rows_read:,} rows, at "
               f"{timezone.localtime(job.heartbeat_at):%H:%M}")
        if _retry_once(job, why=why, cause=WORKER_STOPPED):
            retried += 1
            continue
        reason = (f"The worker importing this file stopped (killed or restarted) after "
                  f"{job.rows_read:,} rows; nothing was saved. Upload the file again.")
        if ImportJob.objects.transition(job.pk, source=S.RUNNING, target=S.FAILED,
                                        reason=reason, finished_at=timezone.now(), message=""):
            _input_discard(job)
            failed += 1
    lost_retried, lost_failed = _lost_messages(cutoff=cutoff)
    removed = _remove_abandoned_workdirs(stale_seconds=stale_seconds)
    done = [f"{retried + lost_retried} stale import(s) queued again" if retried + lost_retried
            else "", f"{failed + lost_failed} stale import(s) failed" if failed + lost_failed
            else "", f"{removed} abandoned import folder(s) removed" if removed else ""]
    return "; ".join(part for part in done if part)


def _retry_once(job: ImportJob, *, why: str, cause: str) -> bool:
    """Queue `job` again with its kept upload, unless it was retried already or its upload is
    gone; its message goes to the broker at once. True when it was queued again. The restart
    is recorded on the row for its page and the API (import_restarts)."""
    options = dict(job.options or {})
    source = Path(settings.MEDIA_ROOT) / job.input_path if job.input_path else None
    if options.get("retried") or source is None or not source.is_file():
        return False
    note = f"Queued again once: {why}; its upload was kept."
    options = import_restart_options(options=options, cause=cause, why=why)
    options["retried"] = note
    moved = (ImportJob.objects.transition(job.pk, source=S.RUNNING, target=S.QUEUED,
                                          options=options, message=note[:300], rows_read=0,
                                          bytes_read=0, started_at=None, heartbeat_at=None,
                                          worker_host="")
             if job.status == S.RUNNING else
             ImportJob.objects.filter(pk=job.pk, status=S.QUEUED).update(
                 options=options, message=note[:300], updated_at=timezone.now()) == 1)
    if not moved:
        return False
    # Unsent (the broker down): queued and marked retried, so the next sweep fails it if its
    # message is still missing.
    with contextlib.suppress(queueing.QueueUnavailable):
        queueing.task_send(name=TASK, args=(job.pk,), task_id=job.celery_task_id,
                           queue=settings.QUEUE_DEFAULT)
    logger.warning("import %s queued again: %s", job.pk, why)
    return True


def _lost_messages(*, cutoff: Any) -> tuple[int, int]:
    """(retried, failed) among the queued imports whose message the broker no longer holds."""
    waiting = list(ImportJob.objects.filter(status=S.QUEUED, created_at__lt=cutoff))
    held = broker.broker_task_ids(queue=settings.QUEUE_DEFAULT) if waiting else None
    if held is None:  # not Redis, or unreadable: nothing may be judged lost
        return 0, 0
    lost = [job for job in waiting if job.celery_task_id not in held]
    if lost:
        # A worker acks the message just before it claims the row: let such a claim land.
        time.sleep(1.0)
    retried = failed = 0
    for job in lost:
        job.refresh_from_db()
        if job.status != S.QUEUED:
            continue
        if _retry_once(job, why="the job queue lost its message (Redis restarted or was "
                                "flushed)", cause=MESSAGE_LOST):
            retried += 1
        elif ImportJob.objects.transition(
                job.pk, source=S.QUEUED, target=S.FAILED, reason=LOST_MESSAGE_REASON,
                finished_at=timezone.now(), message=""):
            _input_discard(job)
            failed += 1
    return retried, failed


def _remove_abandoned_workdirs(*, stale_seconds: float) -> int:
    """services' working folders (datasets/.incoming-*) in which nothing was written for
    `stale_seconds`: their import's process died before it could remove them."""
    root = Path(settings.MEDIA_ROOT) / "datasets"
    if not root.is_dir():
        return 0
    cutoff = time.time() - stale_seconds
    removed = 0
    for folder in root.glob(".incoming-*"):
        try:
            newest = max([folder.stat().st_mtime,
                          *(p.stat().st_mtime for p in folder.iterdir())])
        except OSError:  # removed under us by its own import finishing
            continue
        if newest < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed
