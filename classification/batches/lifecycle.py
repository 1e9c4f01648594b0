"""Batch status changes, each one conditional UPDATE through ``BatchJob.objects.transition``."""

from __future__ import annotations

import logging
import os
import uuid
from typing import Any

from django.utils import timezone

from classification.models import BatchJob
from core import processes

logger = logging.getLogger(__name__)

S = BatchJob.Status


def batch_job_claim(*, batch_id: uuid.UUID | str) -> bool:
    """queued -> running, exactly once; records where it runs, for the reaper."""
    now = timezone.now()
    return BatchJob.objects.transition(
        batch_id, source=S.QUEUED, target=S.RUNNING, started_at=now,
        worker_host=processes.hostname(), worker_pid=os.getpid(), reason="",
    )


def batch_job_finish(
    *, batch_id: uuid.UUID | str, target: str, reason: str = "", **fields: Any
) -> bool:
    """running -> completed | failed | cancelled; False when someone else ended it first."""
    ok = BatchJob.objects.transition(
        batch_id, source=S.RUNNING, target=target, reason=reason[:4000],
        finished_at=timezone.now(), **fields,
    )
    if ok and target != S.COMPLETED:
        logger.info("batch %s -> %s: %s", batch_id, target, reason)
    return ok


def batch_job_fail_to_start(*, batch_id: uuid.UUID | str, reason: str) -> bool:
    """queued -> failed: nothing will ever run it (the broker refused its message)."""
    return BatchJob.objects.transition(
        batch_id, source=S.QUEUED, target=S.FAILED, reason=reason[:4000],
        finished_at=timezone.now(),
    )


# --- Shards (shards.py): who runs a shard, and who cuts or assembles a sharded batch ----------


def worker_token() -> str:
    """"host pid start-time": this process, told apart from a later one that reuses its PID."""
    import psutil

    started = psutil.Process(os.getpid()).create_time()
    return f"{processes.hostname()} {os.getpid()} {started:.0f}"


def worker_token_alive(token: str) -> bool | None:
    """Is the process a token names still running? None when it ran on another host (which
    this one cannot inspect); False for an empty or malformed token."""
    import psutil

    head, _, started = token.rpartition(" ")
    host, _, pid = head.rpartition(" ")
    if not host or not pid.isdigit():
        return False
    if host != processes.hostname():
        return None
    try:
        proc = psutil.Process(int(pid))
        return proc.status() != psutil.STATUS_ZOMBIE and f"{proc.create_time():.0f}" == started
    except psutil.Error:
        return False


def batch_job_lead(*, batch_id: uuid.UUID | str, token: str) -> bool:
    """Become the one process that cuts or assembles a sharded batch; False when another
    holds it (or the batch is no longer running)."""
    return BatchJob.objects.filter(pk=batch_id, status=S.RUNNING, leader="").update(
        leader=token, worker_host=processes.hostname(), worker_pid=os.getpid(),
        updated_at=timezone.now()) == 1


def batch_job_unlead(*, batch_id: uuid.UUID | str, token: str) -> bool:
    """Give the lead back (this process's, or a dead one's the reaper found)."""
    return BatchJob.objects.filter(pk=batch_id, leader=token).update(
        leader="", updated_at=timezone.now()) == 1
