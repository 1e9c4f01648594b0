"""A worker killed with SIGKILL writes nothing more: its row stops advancing, and once it is
older than WORKER_HEARTBEAT_TIMEOUT, ping_worker, /readyz and /metrics report it missing."""

from __future__ import annotations

import io
import signal

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from core.models import WorkerHeartbeat
from tests.job_support import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.timeout(120)]


def test_a_killed_training_worker_is_reported_missing_once_its_heartbeat_is_stale(
    start_worker, settings
) -> None:
    settings.WORKER_HEARTBEAT_TIMEOUT = 3.0
    worker = start_worker(queues=(settings.QUEUE_TRAINING,), WORKER_HEARTBEAT_INTERVAL="0.5")
    row = wait_for(lambda: WorkerHeartbeat.objects.filter(pid=worker.pid).first(), 15, "row")
    call_command("ping_worker", "--queue", "training", stdout=io.StringIO())

    worker.kill(signal.SIGKILL)
    last_seen = WorkerHeartbeat.objects.get(pk=row.pk).last_seen

    def reported_missing() -> bool:
        try:
            call_command("ping_worker", "--queue", "training", stdout=io.StringIO())
        except CommandError:
            return True
        return False

    wait_for(reported_missing, 15, "ping_worker to report the training queue unserved")
    stale = WorkerHeartbeat.objects.get(pk=row.pk)
    assert stale.last_seen == last_seen, "a killed worker wrote a heartbeat"
    assert stale.state == "idle"  # it never got to say it stopped: only its age tells

    out = io.StringIO()
    with pytest.raises(CommandError, match=f"no live worker serves queue "
                                           f"{settings.QUEUE_TRAINING} \\(last heartbeat"):
        call_command("ping_worker", "--queue", "training", stdout=out)
    assert f"{row.hostname} (solo, pid {worker.pid}" in out.getvalue()
    assert ": missing;" in out.getvalue()

    readiness = Client().get("/readyz")
    assert readiness.status_code == 503
    assert "worker:training" in readiness.json()["failing"]
    assert "last heartbeat" in readiness.json()["checks"]["worker:training"]["error"]

    metrics = Client().get("/metrics").content.decode()
    assert f'medlitbot_worker_up{{pool="solo",worker="{row.hostname}"}} 0.0' in metrics
