"""celery beat sends maintenance on its schedule and a worker on the default queue runs it:
abandoned staged uploads go, a running job whose worker is gone is stalled, nothing else moves."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings

from classification.models import TrainingJob
from tests.job_support import wait_for
from tests.plugins.worker import ROOT, worker_env

pytestmark = [pytest.mark.worker, pytest.mark.timeout(180)]


def staged(owner_id: int, token: str, age_seconds: float) -> Path:
    folder = Path(settings.MEDIA_ROOT) / "staging" / str(owner_id) / token
    folder.mkdir(parents=True)
    (folder / "upload.csv").write_text("title,abstract\nA,B\n")
    stamp = time.time() - age_seconds
    os.utime(folder, (stamp, stamp))
    return folder


def test_beat_runs_maintenance_which_purges_abandoned_uploads_and_stalls_orphaned_jobs(
    start_worker, rows, user, tmp_path: Path
) -> None:
    old = staged(user.pk, "a" * 32, age_seconds=2 * 24 * 3600)
    fresh = staged(user.pk, "b" * 32, age_seconds=60)
    # A job "running" under a worker process that no longer exists on this host.
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    model = rows.model(user, status="training")
    orphan = rows.job(model, worker_host=__import__("socket").gethostname(),
                      worker_pid=dead.pid, child_pid=None)
    healthy_model = rows.model(user, name="Queued", status="pending")
    queued = rows.job(healthy_model, status=TrainingJob.Status.QUEUED, phase="queued")

    start_worker(queues=(settings.QUEUE_DEFAULT,), pool="threads", concurrency=1,
                 MEDIA_ROOT=str(settings.MEDIA_ROOT))
    beat_log = (tmp_path / "beat.log").open("ab")
    beat = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "medlitbot_project", "beat", "--loglevel=INFO",
         f"--schedule={tmp_path / 'beat-schedule'}"],
        cwd=ROOT, env=worker_env(MAINTENANCE_INTERVAL_SECONDS="1"),
        stdout=beat_log, stderr=subprocess.STDOUT,
    )
    try:
        wait_for(lambda: not old.exists(), 60, "beat's maintenance to purge the old upload")

        def stalled() -> bool:
            orphan.refresh_from_db()
            return orphan.status == TrainingJob.Status.STALLED

        wait_for(stalled, 30, "maintenance to stall the orphaned job")
    finally:
        beat.terminate()
        beat.wait(20)
    assert fresh.exists(), "an upload staged a minute ago is still being previewed"
    assert "worker process" in orphan.reason
    assert "gone" in orphan.reason
    queued.refresh_from_db()
    assert queued.status == TrainingJob.Status.QUEUED
