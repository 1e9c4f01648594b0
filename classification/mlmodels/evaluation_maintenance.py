"""The maintenance sweep over evaluation jobs (registered in classification/core_hooks.py).

An evaluation is short and cheap to start again, so one whose worker died is failed with a plain
reason, never resumed: the person presses Evaluate again (the file is still kept).
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from classification.batches import storage
from classification.mlmodels.evaluation_jobs import KEEP_INPUT_SECONDS, evaluation_folder
from classification.mlmodels.evaluation_model import EvaluationJob
from core import broker, processes

logger = logging.getLogger(__name__)

S = EvaluationJob.Status
LOST_MESSAGE_REASON = (
    "The job queue lost this evaluation's message (Redis restarted or was flushed), so no "
    "worker would ever start it; evaluate again."
)


def _worker_alive(job: EvaluationJob) -> bool:
    return processes.pid_alive_since(job.worker_pid, started_at=job.started_at)


def _counted(job: EvaluationJob) -> str:
    if job.total is None:
        return "while it was reading the file"
    return f"after {job.processed} of {job.total} rows"


def _fail_dead(*, stale_seconds: float) -> list[str]:
    host, now, ended = processes.hostname(), timezone.now(), []
    for job in EvaluationJob.objects.filter(status=S.RUNNING).order_by("created_at"):
        age = (now - job.updated_at).total_seconds()
        if job.worker_host == host and not _worker_alive(job):
            why = "killed or restarted"
        elif age > stale_seconds:
            why = f"no progress from {job.worker_host or 'its worker'} for {age:.0f} s"
        else:
            continue
        if EvaluationJob.objects.transition(
            job.pk, source=S.RUNNING, target=S.FAILED, finished_at=now, message="",
            reason=f"The inference worker stopped while evaluating ({why}) {_counted(job)}; "
                   "evaluate again.",
        ):
            ended.append(job.pk.hex)
    return ended


def _fail_lost_messages(*, stale_seconds: float) -> list[str]:
    """Queued jobs older than `stale_seconds` whose message the broker (Redis) no longer holds."""
    cutoff = timezone.now() - timedelta(seconds=stale_seconds)
    waiting = list(EvaluationJob.objects.filter(status=S.QUEUED, created_at__lt=cutoff))
    held = broker.broker_task_ids(queue=settings.QUEUE_INFERENCE) if waiting else None
    if held is None:
        return []
    lost = [job for job in waiting if job.celery_task_id not in held]
    if lost:
        # A worker acks the message just before it claims the row: let such a claim land.
        time.sleep(1.0)
    return [job.pk.hex for job in lost if EvaluationJob.objects.transition(
        job.pk, source=S.QUEUED, target=S.FAILED, reason=LOST_MESSAGE_REASON,
        finished_at=timezone.now())]


def _purge_inputs() -> int:
    """Ended jobs' files past KEEP_INPUT_SECONDS go; the rows (and their results) stay."""
    cutoff = timezone.now() - timedelta(seconds=KEEP_INPUT_SECONDS)
    old = EvaluationJob.objects.exclude(status__in=EvaluationJob.ACTIVE_STATUSES).filter(
        finished_at__lt=cutoff).exclude(input_path="")
    purged = 0
    for job in old.only("id", "owner_id", "input_path"):
        storage.input_discard(job.input_path)
        storage.remove_folder(evaluation_folder(owner_id=job.owner_id, job_id=job.pk))
        purged += EvaluationJob.objects.filter(pk=job.pk).update(input_path="")
    return purged


def evaluation_jobs_reap(*, stale_seconds: float) -> list[str]:
    """Fail the evaluations that can make no more progress, and remove files kept past a day.

    Running: this host's whose worker process is dead, and any whose row has had no progress
    write for `stale_seconds`. Queued: older than `stale_seconds` and their message gone from
    the broker. Returns the ids failed. Idempotent: a second run finds nothing more to do.
    """
    ended = _fail_dead(stale_seconds=stale_seconds)
    ended += _fail_lost_messages(stale_seconds=stale_seconds)
    if ended:
        logger.warning("maintenance: failed evaluations %s (their worker or message is gone)",
                       ended)
    _purge_inputs()
    return ended
