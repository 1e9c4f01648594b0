"""Housekeeping that celery beat runs every MAINTENANCE_INTERVAL_SECONDS on the default queue.

Each step is independent: one that raises is logged and the others still run, so a bug in one
kind of cleanup never stops the rest. Every step is idempotent, so an overlapping or repeated
run changes nothing the second time.

The steps are registered (core.registry): each app registers its own in its AppConfig.ready(),
and core registers the one below for its own rows.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.utils import timezone

from core import registry

logger = logging.getLogger(__name__)

# Pings are proofs for one command's round trip; a day of them is plenty for a post-mortem.
PING_KEEP = timedelta(days=1)


def worker_pings_purge_old() -> str:
    from core.models import WorkerPing

    removed, _ = WorkerPing.objects.filter(created_at__lt=timezone.now() - PING_KEEP).delete()
    return f"{removed} old worker ping(s) removed" if removed else ""


def upload_spool_purge() -> str:
    """The upload files a killed web worker left behind (core.uploads), on this machine."""
    from core.uploads import upload_spool_purge_stale

    return upload_spool_purge_stale()


def maintenance_run() -> list[str]:
    """Run every registered step; returns what each one did (empty strings dropped) for the log."""
    done = []
    for step in registry.maintenance_steps():
        try:
            if said := step.func():
                done.append(said)
        except Exception:
            logger.exception("maintenance step %s failed", step.name)
    if done:
        logger.info("maintenance: %s", "; ".join(done))
    return done
