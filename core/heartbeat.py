"""Every Celery worker proves it is alive by writing its own WorkerHeartbeat row.

Why not `celery inspect`: the training worker runs a solo pool, so while it trains (for hours)
its only thread is inside the task and no control message is ever answered. A daemon thread
started here keeps writing the row every WORKER_HEARTBEAT_INTERVAL seconds regardless, with
the worker's queues, pool and what it is doing ("training job 12").

Wiring: core.apps.CoreConfig.ready() imports this module, so every process that sets Django up
connects the receivers; only a worker ever sends these signals.

- ``worker_ready`` (main process, once the consumer is up) starts the thread. It is the one
  start signal that fires in the process that runs the tasks for both pools we use: the solo
  pool runs tasks in the main thread, the threads pool in threads of the main process.
  (``worker_process_init`` fires only in prefork children; ``worker_init`` fires before
  Django's own setup has connected these receivers.) Under a prefork pool the row still proves
  the worker is alive, but shows no current task, since tasks run in other processes.
- ``task_prerun`` / ``task_postrun`` record the running task and wake the thread so "busy"
  shows at once instead of up to one interval later.
- ``worker_shutting_down`` (inside the SIGTERM handler) only flips a flag: a signal handler
  must not take locks or use the database the interrupted main thread may be using.
- ``worker_shutdown`` stops the thread and marks the row stopped. A worker killed with
  SIGKILL writes nothing; its row simply stops advancing and goes stale.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from celery.signals import (
    task_postrun,
    task_prerun,
    worker_ready,
    worker_shutdown,
    worker_shutting_down,
)
from django.conf import settings
from django.db import close_old_connections, connections
from django.utils import timezone

from core import processes, registry

logger = logging.getLogger(__name__)

# A node name not seen for this long is a retired worker; its row is removed at the next start.
PRUNE_AFTER = timedelta(days=7)
# Pool class modules -> the names `celery worker --pool=` takes.
POOL_NAMES = {"solo": "solo", "thread": "threads", "prefork": "prefork"}


@dataclass(frozen=True)
class RunningTask:
    name: str
    task_id: str
    job: str
    since: datetime


def task_job(name: str, args: Any, kwargs: Any) -> str:
    """A short description of what a task works on, e.g. "training job 12" or "batch 7".

    The app that owns the task registers its wording (core.registry); any other task is named by
    its own short name ("maintenance run").
    """
    describe = registry.task_describer(task_name=name)
    if describe is not None:
        try:
            return describe(list(args or ()), dict(kwargs or {}))
        except Exception:  # wording is cosmetic: it must never cost the task its start
            logger.exception("could not describe task %s", name)
    return name.rsplit(".", 1)[-1].replace("_", " ")


class HeartbeatThread(threading.Thread):
    """Writes the row every `interval` seconds, and at once when a task starts or ends."""

    def __init__(self, *, hostname: str, queues: list[str], pool: str, concurrency: int,
                 interval: float, queues_source: Any = None) -> None:
        super().__init__(name="medlitbot-worker-heartbeat", daemon=True)
        self.hostname = hostname
        self.host = processes.hostname()
        self.pid = os.getpid()
        self.queues = queues
        self.queues_source = queues_source
        self.pool = pool
        self.concurrency = concurrency
        self.interval = interval
        self.started_at = timezone.now()
        # Read once: a GPU worker is started with its GPU named here and keeps it for life.
        self.facts = {"devices": os.environ.get("CUDA_VISIBLE_DEVICES")}
        self.stopping = False  # set from a signal handler: a plain assignment, no lock
        self._running: dict[str, RunningTask] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._halt = threading.Event()  # not "_stop": threading.Thread uses that name
        self._failing = False
        self.beats = 0

    # --- called from the task threads -------------------------------------------------------
    def task_started(self, *, name: str, task_id: str, job: str) -> None:
        with self._lock:
            self._running[task_id] = RunningTask(name, task_id, job, timezone.now())
        self._wake.set()

    def task_finished(self, *, task_id: str) -> None:
        with self._lock:
            self._running.pop(task_id, None)
        self._wake.set()

    # --- the thread ---------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        from core.models import WorkerHeartbeat

        with self._lock:
            running = sorted(self._running.values(), key=lambda r: r.since)
        state = (
            WorkerHeartbeat.State.STOPPING if self.stopping
            else WorkerHeartbeat.State.BUSY if running
            else WorkerHeartbeat.State.IDLE
        )
        fields: dict[str, Any] = {
            "hostname": self.hostname, "host": self.host, "pid": self.pid,
            "queues": self._current_queues(), "pool": self.pool,
            "concurrency": self.concurrency, "started_at": self.started_at, "state": state,
            "facts": self.facts,
        }
        if running:
            # The longest-running task names the worker's job; a threads pool running several
            # says how many more.
            first = running[0]
            more = f" (+{len(running) - 1} more)" if len(running) > 1 else ""
            fields.update(current_task=first.name, current_task_id=first.task_id,
                          current_job=first.job + more, busy_since=first.since)
        return fields

    def _current_queues(self) -> list[str]:
        # Queues can be added or cancelled at runtime (control commands); read them live.
        if self.queues_source is not None:
            try:
                return sorted(self.queues_source.consume_from)
            except Exception:  # a dict resized under us: keep the last good list
                return self.queues
        return self.queues

    def beat(self) -> bool:
        from core import services

        # This thread's own connection: drop it if it broke or outlived CONN_MAX_AGE.
        close_old_connections()
        try:
            services.worker_heartbeat_beat(**self.snapshot())
        except Exception as exc:  # the database being away must never end the thread
            if not self._failing:
                logger.warning("worker heartbeat could not be written: %s", exc)
            self._failing = True
            connections.close_all()  # reconnect from scratch at the next beat
            return False
        finally:
            # With CONN_MAX_AGE=0 (SQLite) this closes the connection until the next beat.
            close_old_connections()
        if self._failing:
            logger.info("worker heartbeat written again")
        self._failing = False
        self.beats += 1
        return True

    def run(self) -> None:
        try:
            while not self._halt.is_set():
                self.beat()
                self._wake.wait(self.interval)
                self._wake.clear()
        finally:
            connections.close_all()

    def stop(self, timeout: float = 10.0) -> None:
        self._halt.set()
        self._wake.set()
        if self.is_alive() and threading.current_thread() is not self:
            self.join(timeout)


_thread: HeartbeatThread | None = None


def current() -> HeartbeatThread | None:
    return _thread


def pool_name(pool: Any) -> str:
    module = type(pool).__module__.rsplit(".", 1)[-1] if pool is not None else ""
    return POOL_NAMES.get(module, module or "unknown")


@worker_ready.connect
def start_heartbeat(sender: Any = None, **kwargs: Any) -> None:
    """Start the thread once per worker process (``sender`` is the worker's Consumer)."""
    global _thread
    if _thread is not None and _thread.is_alive():
        return
    try:
        amqp_queues = sender.app.amqp.queues
        queues = sorted(amqp_queues.consume_from)
        controller = getattr(sender, "controller", None)
        _thread = HeartbeatThread(
            hostname=sender.hostname,
            queues=queues,
            pool=pool_name(getattr(sender, "pool", None)),
            concurrency=int(getattr(controller, "concurrency", 1) or 1),
            interval=float(settings.WORKER_HEARTBEAT_INTERVAL),
            queues_source=amqp_queues,
        )
        _prune_retired()
        _thread.start()
        logger.info("worker heartbeat every %.0f s as %s, queues %s",
                    _thread.interval, _thread.hostname, ", ".join(queues))
    except Exception:  # a heartbeat bug must never stop the worker from working
        logger.exception("could not start the worker heartbeat")


def _prune_retired() -> None:
    from core import services

    try:
        services.worker_heartbeats_prune(older_than=PRUNE_AFTER)
    except Exception as exc:
        logger.warning("could not prune old worker heartbeats: %s", exc)
    finally:
        # The worker's main thread would otherwise hold this connection idle across tasks.
        close_old_connections()


@task_prerun.connect
def heartbeat_task_started(sender: Any = None, task_id: str | None = None, task: Any = None,
                           args: Any = None, kwargs: Any = None, **extra: Any) -> None:
    if _thread is None:
        return
    name = getattr(task, "name", None) or getattr(sender, "name", "") or "task"
    _thread.task_started(name=name, task_id=task_id or "", job=task_job(name, args, kwargs))


@task_postrun.connect
def heartbeat_task_finished(sender: Any = None, task_id: str | None = None,
                            **extra: Any) -> None:
    if _thread is not None:
        _thread.task_finished(task_id=task_id or "")


@worker_shutting_down.connect
def heartbeat_stopping(sender: Any = None, **kwargs: Any) -> None:
    # Runs inside the SIGTERM/SIGINT handler: only flip the flag; the thread writes it.
    if _thread is not None:
        _thread.stopping = True


@worker_shutdown.connect
def stop_heartbeat(sender: Any = None, **kwargs: Any) -> None:
    global _thread
    thread, _thread = _thread, None
    if thread is None:
        return
    thread.stop(timeout=thread.interval + 5)
    from core import services

    for attempt in range(3):  # SQLite may be busy for a moment; a stopped row is worth a retry
        try:
            services.worker_heartbeat_stop(hostname=thread.hostname, pid=thread.pid)
            break
        except Exception as exc:
            logger.warning("could not mark worker %s stopped (%s)", thread.hostname, exc)
            connections.close_all()
            time.sleep(0.5 * (attempt + 1))
    connections.close_all()
