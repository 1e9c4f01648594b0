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
