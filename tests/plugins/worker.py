"""A real Celery worker, started the way start_m1.sh starts it, for tests that need one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


# Every worker a test starts shares two cores with the parallel suite's other busy processes:
# - at the production TRAINING_NICE of 10, a training process beside them (all at nice 0) gets
#   about a twentieth of a core and misses its heartbeat while still importing torch;
# - three jobs training at once on every core would put six torch threads on two cores, each
#   barrier waiting for a descheduled thread.
# A test of either setting passes its own value.
SHARED_MACHINE = {"TRAINING_NICE": "0", "CPU_THREADS": "1"}


def worker_env(**extra: str) -> dict[str, str]:
    """The environment a subprocess needs to share this test's database, broker and folders."""
    env = {**SHARED_MACHINE, **os.environ}
    env["DJANGO_SETTINGS_MODULE"] = "medlitbot_project.settings_test"
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        env["USE_SQLITE"] = "True"
        env["SQLITE_PATH"] = str(db["NAME"])
        env.pop("DATABASE_URL", None)
    else:
        env["USE_SQLITE"] = "False"
        env["DATABASE_URL"] = (
            f"postgres://{db['USER'] or 'postgres'}@{db['HOST'] or '127.0.0.1'}:"
            f"{db['PORT'] or 5432}/{db['NAME']}"
        )
    env["REDIS_URL"] = settings.REDIS_URL
    env["CELERY_BROKER_URL"] = settings.CELERY_BROKER_URL
    env.update(extra)
    return env


def all_queues() -> tuple[str, ...]:
    return (settings.QUEUE_TRAINING, settings.QUEUE_INFERENCE, settings.QUEUE_DEFAULT)


class WorkerProcess:
    """One `celery worker` subprocess whose log the test can read.

    By default a solo worker on every queue; ``queues`` and ``pool`` start the split workers
    that start_m1.sh runs (a solo training worker, a threaded inference worker).
    """

    def __init__(self, log_path: Path, *, queues: tuple[str, ...] | None = None,
                 pool: str = "solo", concurrency: int = 1, **env: str) -> None:
        self.log_path = log_path
        self.queues = queues or all_queues()
        self.pool = pool
        self.concurrency = concurrency
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, timeout: float = 90.0) -> WorkerProcess:
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [
                sys.executable, "-m", "celery", "-A", "medlitbot_project", "worker",
                f"--pool={self.pool}", f"--concurrency={self.concurrency}",
                f"--queues={','.join(self.queues)}", "--without-gossip", "--without-mingle",
                "--optimization=fair", "--loglevel=INFO",
                f"--hostname=test-{uuid.uuid4().hex[:8]}@%h",
            ],
            cwd=ROOT, env=worker_env(**self.env), stdout=log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if " ready." in self.log():
                return self
            if self.proc.poll() is not None:
                raise RuntimeError(f"worker exited with {self.proc.returncode}:\n{self.log()}")
            time.sleep(0.2)
        raise RuntimeError(f"worker not ready after {timeout} s:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def clean_broker() -> None:
    """Empty this run's queues so no message from an earlier test is consumed.

    Only the queues: a flush of the whole DB would take messages from a suite running beside us.
    """
    if settings.CELERY_BROKER_URL.startswith("redis://"):
        redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(
            *all_queues(), settings.QUEUE_TRAINING_GPU)


@pytest.fixture
def start_worker(transactional_db: None, clean_broker: None, tmp_path: Path) -> Iterator:
    """Call `start_worker(queues=..., pool=..., **env)`; every worker is stopped at teardown."""
    workers: list[WorkerProcess] = []

    def start(**options: Any) -> WorkerProcess:
        worker = WorkerProcess(tmp_path / f"worker{len(workers)}.log", **options).start()
        workers.append(worker)
        return worker

    yield start
    for worker in workers:
        worker.stop()


@pytest.fixture(autouse=True)
def the_project_app_stays_current() -> Iterator[None]:
    """Fail the test that leaves another Celery app current, not the tests after it.

    A `Celery(...)` built without `set_as_current=False` becomes `current_app` for the rest of the
    process: shared tasks then publish to its broker and broker reads judge through it.
    """
    from celery import current_app

    from medlitbot_project.celery import app

    yield
    current = current_app._get_current_object()
    if current is not app:
        app.set_current()
        pytest.fail(f"this test left the Celery app {current.main!r} current; build it with "
                    "set_as_current=False", pytrace=False)
