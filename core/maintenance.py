"""Housekeeping that celery beat runs every MAINTENANCE_INTERVAL_SECONDS on the default queue.

Each step is independent: one that raises is logged and the others still run, so a bug in one
kind of cleanup never stops the rest. Every step is idempotent, so an overlapping or repeated
run changes nothing the second time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

logger = logging.getLogger(__name__)

# Pings are proofs for one command's round trip; a day of them is plenty for a post-mortem.
PING_KEEP = timedelta(days=1)


def _stuck_training_jobs() -> str:
    from classification import services

    checks = services.training_jobs_cleanup(stale_seconds=2 * settings.HEARTBEAT_TIMEOUT)
    acted = [c for c in checks if c.problem]
    return f"{len(acted)} stuck training job(s) ended" if acted else ""


def _dead_batches() -> str:
    from classification.batches.services import batch_jobs_reap

    # A running batch writes progress about once a second; one chunk on a slow CPU can take
    # several, so five minutes of silence means its worker is gone.
    ended = batch_jobs_reap(stale_seconds=300)
    return f"{len(ended)} batch(es) whose worker is gone resumed or failed" if ended else ""


def _leftover_checkpoints() -> str:
    from classification.jobs.cleanup import training_job_dirs_sweep

    # Jobs ended while no supervisor ran (a dead worker, the reaper) still hold every checkpoint.
    removed = training_job_dirs_sweep()
    return f"{len(removed)} leftover checkpoint folder(s) removed" if removed else ""


def _abandoned_staged_uploads() -> str:
    from dataset_management.staging import staging_purge_abandoned

    removed = staging_purge_abandoned()
    return f"{removed} abandoned staged upload(s) removed" if removed else ""


def _old_worker_pings() -> str:
    from core.models import WorkerPing

    removed, _ = WorkerPing.objects.filter(created_at__lt=timezone.now() - PING_KEEP).delete()
    return f"{removed} old worker ping(s) removed" if removed else ""


STEPS: list[Callable[[], str]] = [
    _stuck_training_jobs,
    _dead_batches,
    _leftover_checkpoints,
    _abandoned_staged_uploads,
    _old_worker_pings,
]


def maintenance_run() -> list[str]:
    """Run every step; returns what each one did (empty strings dropped) for the log."""
    done = []
    for step in STEPS:
        try:
            if said := step():
                done.append(said)
        except Exception:
            logger.exception("maintenance step %s failed", step.__name__)
    if done:
        logger.info("maintenance: %s", "; ".join(done))
    return done
