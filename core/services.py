"""Core writes: the worker round-trip ping and the workers' own heartbeat rows."""

import time
import uuid
from datetime import datetime, timedelta
from typing import Any

from celery import current_app
from django.db import transaction
from django.utils import timezone

from core.models import WorkerHeartbeat, WorkerPing

WORKER_PING_TASK = "core.worker_ping"


def worker_ping_roundtrip(*, timeout: float = 10.0) -> WorkerPing | None:
    """Send a ping through the broker and wait for a worker to write it back.

    Returns the row a worker wrote, or None if no worker answered within `timeout`.
    """
    token = uuid.uuid4().hex
    # By name (core.tasks.worker_ping): a service never imports the tasks module.
    transaction.on_commit(lambda: current_app.send_task(WORKER_PING_TASK, args=[token]))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = WorkerPing.objects.filter(token=token).first()
        if row is not None:
            return row
        time.sleep(0.1)
    return None


def worker_heartbeat_beat(
    *,
    hostname: str,
    host: str,
    pid: int,
    queues: list[str],
    pool: str,
    concurrency: int,
    started_at: datetime,
    state: str,
    current_task: str = "",
    current_task_id: str = "",
    current_job: str = "",
    busy_since: datetime | None = None,
    facts: dict[str, Any] | None = None,
) -> None:
    """Write this worker's row: one UPDATE on the unique node name, an INSERT the first time.

    Every field is rewritten on each beat, so a restarted worker with the same node name simply
    takes the row over, and a row someone deleted comes back within one interval.
    """
    fields = {
        "host": host[:255], "pid": pid, "queues": list(queues), "pool": pool[:40],
        "concurrency": concurrency, "started_at": started_at, "state": state,
        "current_task": current_task[:255], "current_task_id": current_task_id[:255],
        "current_job": current_job[:255], "busy_since": busy_since, "facts": dict(facts or {}),
        "last_seen": timezone.now(),
    }
    if not WorkerHeartbeat.objects.filter(hostname=hostname).update(**fields):
        WorkerHeartbeat.objects.update_or_create(hostname=hostname, defaults=fields)


def worker_heartbeat_stop(*, hostname: str, pid: int) -> bool:
    """Mark the row stopped, unless another process (a restarted worker) owns it by now."""
    return bool(
        WorkerHeartbeat.objects.filter(hostname=hostname, pid=pid).update(
            state=WorkerHeartbeat.State.STOPPED, current_task="", current_task_id="",
            current_job="", busy_since=None, last_seen=timezone.now(),
        )
    )


def worker_heartbeats_prune(*, older_than: timedelta) -> int:
    """Delete rows of workers not seen for `older_than`: renamed or retired nodes."""
    removed, _ = WorkerHeartbeat.objects.filter(
        last_seen__lt=timezone.now() - older_than
    ).delete()
    return removed
