"""/readyz: 200 when the database and broker answer and a live worker serves each queue; 503
naming each failing check otherwise, with no host names, URLs or user data in the answer."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from core import services

pytestmark = pytest.mark.django_db


def heartbeat(hostname: str, queues: list[str], *, age: float = 0.0, **fields) -> None:
    services.worker_heartbeat_beat(
        hostname=hostname, host="box", pid=1234, queues=queues, pool="solo", concurrency=1,
        started_at=timezone.now(), state=fields.pop("state", "idle"), **fields,
    )
    if age:
        from core.models import WorkerHeartbeat

        WorkerHeartbeat.objects.filter(hostname=hostname).update(
            last_seen=timezone.now() - timedelta(seconds=age)
        )


def test_with_no_worker_every_queue_is_named_missing() -> None:
    response = Client().get("/readyz")

    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["failing"] == ["worker:training", "worker:inference", "worker:default"]
    assert body["checks"]["database"] == {"ok": True}
    assert body["checks"]["broker"] == {"ok": True}
    training = body["checks"]["worker:training"]
    assert training["ok"] is False
    assert settings.QUEUE_TRAINING in training["error"]
    assert training["live"] == 0


def test_a_live_worker_per_queue_makes_it_ready_and_busy_workers_are_counted() -> None:
    heartbeat("training@box", [settings.QUEUE_TRAINING], state="busy",
              current_job="training job 3")
    heartbeat("inference@box", [settings.QUEUE_INFERENCE, settings.QUEUE_DEFAULT])

    response = Client().get("/readyz")

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["status"] == "ok"
    assert body["failing"] == []
    assert body["checks"]["worker:training"] == {
        "ok": True, "queue": settings.QUEUE_TRAINING, "live": 1, "busy": 1,
    }
    assert "training job 3" not in response.content.decode()  # no job or user data
    assert "box" not in response.content.decode()


def test_a_worker_silent_past_the_timeout_no_longer_serves_its_queue() -> None:
    heartbeat("training@box", [settings.QUEUE_TRAINING],
              age=settings.WORKER_HEARTBEAT_TIMEOUT + 5)
    heartbeat("inference@box", [settings.QUEUE_INFERENCE, settings.QUEUE_DEFAULT])

    body = Client().get("/readyz").json()

    assert body["failing"] == ["worker:training"]
    assert "last heartbeat 35 s ago" in body["checks"]["worker:training"]["error"]


def test_an_unreachable_broker_is_named_within_the_timeout(settings) -> None:
    heartbeat("training@box", [settings.QUEUE_TRAINING])
    heartbeat("inference@box", [settings.QUEUE_INFERENCE, settings.QUEUE_DEFAULT])
    settings.CELERY_BROKER_URL = "redis://:s3cret@127.0.0.1:1/0"  # nothing listens on port 1

    response = Client().get("/readyz")

    assert response.status_code == 503
    body = response.json()
    assert body["failing"] == ["broker"]
    assert body["checks"]["broker"]["error"].startswith("broker unreachable")
    assert "s3cret" not in response.content.decode()
