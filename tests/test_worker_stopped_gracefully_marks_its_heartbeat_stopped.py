"""A worker stopped with SIGTERM marks its own row stopped on the way out, so it is reported
gone at once instead of after WORKER_HEARTBEAT_TIMEOUT."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from core.models import WorkerHeartbeat
from tests.job_support import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.timeout(120)]


def test_sigterm_leaves_the_row_stopped_and_the_queue_reported_unserved(
    start_worker, settings
) -> None:
    worker = start_worker(queues=(settings.QUEUE_INFERENCE, settings.QUEUE_DEFAULT),
                          pool="threads", concurrency=2)
    row = wait_for(lambda: WorkerHeartbeat.objects.filter(pid=worker.pid).first(), 15, "row")
    assert row.state == "idle"
    assert sorted(row.queues) == sorted([settings.QUEUE_INFERENCE, settings.QUEUE_DEFAULT])

    worker.stop()  # SIGTERM: Celery's warm shutdown

    row.refresh_from_db()
    assert row.state == "stopped"
    out = io.StringIO()
    with pytest.raises(CommandError, match=f"queue {settings.QUEUE_INFERENCE} "
                                           "\\(its worker stopped\\)"):
        call_command("ping_worker", "--queue", "inference", stdout=out)
    assert f"{row.hostname} (threads, pid {worker.pid}" in out.getvalue()
    assert ": stopped;" in out.getvalue()
