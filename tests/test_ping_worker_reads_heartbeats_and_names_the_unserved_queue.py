"""ping_worker answers from the workers' heartbeat rows: it lists each worker with its queues and
what it does, exits 0 when a live worker serves every queue asked for, names the queue that has
none, and with --timeout waits for a worker that is still starting."""

from __future__ import annotations

import io
import threading
import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connections
from django.utils import timezone

from core import services


def beat(hostname: str, queues: list[str], **fields) -> None:
    services.worker_heartbeat_beat(
        hostname=hostname, host="box", pid=fields.pop("pid", 77), queues=queues,
        pool=fields.pop("pool", "solo"), concurrency=1, started_at=timezone.now(),
        state=fields.pop("state", "idle"), **fields,
    )


def ping(*args: str) -> str:
    out = io.StringIO()
    call_command("ping_worker", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_every_queue_served_exits_zero_and_shows_what_each_worker_does() -> None:
    beat("training@box", [settings.QUEUE_TRAINING], state="busy",
         current_task="classification.tasks.start_model_training", current_task_id="t-1",
         current_job="training job 12")
    beat("inference@box", [settings.QUEUE_INFERENCE, settings.QUEUE_DEFAULT], pool="threads")

    out = ping()

    assert f"training@box (solo, pid 77 on box) queues {settings.QUEUE_TRAINING}: " \
           "busy: training job 12" in out
    assert "inference@box (threads" in out
    assert ": idle; heartbeat 0 s ago" in out
    assert out.strip().splitlines()[-1].startswith("workers attached")


@pytest.mark.django_db
def test_a_missing_queue_is_named_and_exits_non_zero() -> None:
    beat("inference@box", [settings.QUEUE_INFERENCE, settings.QUEUE_DEFAULT])

    with pytest.raises(CommandError, match=f"no worker has ever served queue "
                                           f"{settings.QUEUE_TRAINING}"):
        ping()
    assert "workers attached" in ping("--queue", "inference", "--queue", "default")


@pytest.mark.django_db
def test_a_stale_worker_is_listed_as_missing() -> None:
    beat("training@box", [settings.QUEUE_TRAINING])
    from core.models import WorkerHeartbeat

    WorkerHeartbeat.objects.update(last_seen=timezone.now() - timedelta(seconds=90))
    out = io.StringIO()

    with pytest.raises(CommandError, match="last heartbeat 90 s ago"):
        call_command("ping_worker", "--queue", "training", stdout=out)
    assert "training@box" in out.getvalue()
    assert ": missing; heartbeat 90 s ago" in out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_timeout_waits_for_a_worker_that_appears_while_it_waits() -> None:
    def late_worker() -> None:
        time.sleep(1.0)
        beat("training@box", [settings.QUEUE_TRAINING])
        connections.close_all()

    writer = threading.Thread(target=late_worker)
    writer.start()
    started = time.monotonic()
    try:
        out = ping("--queue", "training", "--timeout", "20")
    finally:
        writer.join()

    assert 0.9 < time.monotonic() - started < 10
    assert "workers attached" in out
