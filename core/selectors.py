"""Core reads: which workers are alive and what they serve, and the readiness checks.

A worker is live when its heartbeat row is younger than WORKER_HEARTBEAT_TIMEOUT and does not
say it stopped (core.heartbeat writes the rows). Every answer here comes from the database and
the broker, never from `celery inspect`, which a solo worker busy training cannot answer.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone

from core import backing_services, broker, diskspace, filestore
from core.models import WorkerHeartbeat

logger = logging.getLogger(__name__)

def worker_queues() -> dict[str, str]:
    """The queues a complete installation serves, by role: {"training": "<prefix>training"}."""
    return {
        "training": settings.QUEUE_TRAINING,
        "inference": settings.QUEUE_INFERENCE,
        "default": settings.QUEUE_DEFAULT,
    }


def worker_queues_optional() -> dict[str, str]:
    """Queues served only where the hardware exists: {"training.gpu": "<prefix>training.gpu"}.

    An install without them is complete, so readiness never requires them; jobs go there only
    while a live worker serves them (or a person pinned the job there).
    """
    return {"training.gpu": settings.QUEUE_TRAINING_GPU}


def worker_queue_resolve(*, name: str) -> str:
    """A role ("training", "training.gpu") or a full queue name -> the queue name; unknown names
    pass through."""
    return {**worker_queues(), **worker_queues_optional()}.get(name, name)


def worker_heartbeat_list() -> list[WorkerHeartbeat]:
    """Every worker that has written a row, live or not, by node name."""
    return list(WorkerHeartbeat.objects.order_by("hostname"))


@dataclass
class QueueCoverage:
    queue: str
    live: list[WorkerHeartbeat] = field(default_factory=list)
    # The most recently seen worker that served this queue but is gone: for "last seen" texts.
    last_gone: WorkerHeartbeat | None = None

    @property
    def ok(self) -> bool:
        return bool(self.live)

    def problem(self, *, now: Any = None) -> str:
        if self.live:
            return ""
        if self.last_gone is None:
            return f"no worker has ever served queue {self.queue}"
        gone = self.last_gone
        if gone.state == WorkerHeartbeat.State.STOPPED:
            return f"no live worker serves queue {self.queue} (its worker stopped)"
        return (
            f"no live worker serves queue {self.queue} (last heartbeat "
            f"{gone.age_seconds(now=now):.0f} s ago; limit "
            f"{settings.WORKER_HEARTBEAT_TIMEOUT:.0f} s)"
        )


def worker_queue_coverage(
    *, queues: list[str] | None = None, workers: list[WorkerHeartbeat] | None = None
) -> list[QueueCoverage]:
    """For each queue (default: the three required ones), the live workers serving it."""
    now = timezone.now()
    wanted = queues if queues is not None else list(worker_queues().values())
    rows = worker_heartbeat_list() if workers is None else workers
    coverage = []
    for queue in wanted:
        entry = QueueCoverage(queue=queue)
        for row in rows:
            if not row.serves(queue):
                continue
            if row.is_live(now=now):
                entry.live.append(row)
            elif entry.last_gone is None or row.last_seen > entry.last_gone.last_seen:
                entry.last_gone = row
        coverage.append(entry)
    return coverage


# --- readiness --------------------------------------------------------------------------------
# Failures are named by kind only (no URLs, host names or credentials): /readyz needs no login.


def database_check() -> str:
    """'' when a query succeeds, else what failed."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        logger.warning("readiness: database check failed: %s", exc)
        return f"database query failed ({type(exc).__name__})"
    return ""


def broker_check(*, timeout: float) -> str:
    """'' when the broker answers within `timeout` seconds, else what failed."""
    try:
        if broker.broker_is_redis():
            broker.broker_ping(timeout=timeout)
        else:
            from celery import current_app

            with current_app.connection_for_read(connect_timeout=timeout) as conn:
                conn.ensure_connection(max_retries=1, interval_start=0, timeout=timeout)
    except Exception as exc:
        logger.warning("readiness: broker check failed: %s", exc)
        return f"broker unreachable ({type(exc).__name__})"
    return ""


def broker_queue_depths(*, timeout: float = 2.0) -> dict[str, int] | None:
    """Messages waiting per queue (Redis LLEN); None when the broker is not Redis or is down."""
    if not broker.broker_is_redis():
        return None
    # The GPU queue too: a job pinned to it waits there even when no GPU worker exists.
    queues = [*worker_queues().values(), *worker_queues_optional().values()]
    try:
        return broker.queue_depths(queues=queues, timeout=timeout)
    except Exception as exc:
        logger.warning("could not read queue depths from the broker: %s", exc)
        return None


@dataclass
class Readiness:
    checks: dict[str, str]  # check name -> "" (passed) or what failed
    details: dict[str, dict[str, Any]] = field(default_factory=dict)  # counts, never names
    # What this process runs on: {"engine": "postgresql", "name": "medlitbot"}, no host or secret.
    database: dict[str, str] = field(default_factory=dict)
    cache: str = ""

    @property
    def ok(self) -> bool:
        return not any(self.checks.values())

    @property
    def failing(self) -> list[str]:
        return [name for name, problem in self.checks.items() if problem]

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": "ok" if self.ok else "unavailable",
            "checks": {
                name: {"ok": not problem, **({"error": problem} if problem else {}),
                       **self.details.get(name, {})}
                for name, problem in self.checks.items()
            },
            "failing": self.failing,
            "database": self.database,
            "cache": self.cache,
        }


def system_readiness(*, broker_timeout: float = 1.5) -> Readiness:
    """Database, broker, cache, free disk in each watched folder, and a live worker for each
    required queue (checks "worker:<role>"); the optional GPU training queue is never required:
    jobs fall back to the CPU queue. Also names the database engine and the cache in use."""
    checks = {"database": database_check(), "broker": broker_check(timeout=broker_timeout),
              # The throttles' counts, shared by every process.
              "cache": backing_services.cache_check()}
    free_mb = diskspace.free_megabytes()
    checks["disk"] = diskspace.free_space_problem(
        free_mb=free_mb, min_free_mb=settings.READYZ_MIN_FREE_MB)
    details: dict[str, dict[str, Any]] = {
        "disk": {"min_free_mb": settings.READYZ_MIN_FREE_MB, "free_mb": free_mb}}
    database, cache = backing_services.database_public(), backing_services.cache_public()
    if filestore.shared_enabled():
        # Several machines: a node that cannot reach the bucket can neither load a model
        # another node trained nor hand its own work on.
        checks["storage"] = filestore.storage_check()
    roles = {queue: role for role, queue in worker_queues().items()}
    if checks["database"]:
        for role in roles.values():
            checks[f"worker:{role}"] = "unknown: the database is unreachable"
        return Readiness(checks, details, database=database, cache=cache)
    for entry in worker_queue_coverage():
        name = f"worker:{roles[entry.queue]}"
        checks[name] = entry.problem()
        details[name] = {
            "queue": entry.queue,
            "live": len(entry.live),
            "busy": sum(1 for w in entry.live if w.state == WorkerHeartbeat.State.BUSY),
        }
    return Readiness(checks, details, database=database, cache=cache)
