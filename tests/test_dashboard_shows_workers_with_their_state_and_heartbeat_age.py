"""The dashboard's Workers card: each worker's host, queues, state, current job and heartbeat
age, and a warning naming any queue no live worker serves."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from core import services
from core.models import WorkerHeartbeat

pytestmark = pytest.mark.django_db


def test_live_busy_and_missing_workers_are_told_apart(alice_client: Client, user, rows) -> None:
    now = timezone.now()
    job = rows.job(rows.model(user, rows.dataset(user)))  # alice's: she may see its id
    services.worker_heartbeat_beat(
        hostname="training@gpu-box", host="gpu-box", pid=9, queues=[settings.QUEUE_TRAINING],
        pool="solo", concurrency=1, started_at=now, state="busy",
        current_job=f"training job {job.pk}", busy_since=now - timedelta(minutes=3),
    )
    services.worker_heartbeat_beat(
        hostname="inference@web-box", host="web-box", pid=10,
        queues=[settings.QUEUE_INFERENCE, settings.QUEUE_DEFAULT], pool="threads",
        concurrency=2, started_at=now, state="idle",
    )
    WorkerHeartbeat.objects.filter(hostname="inference@web-box").update(
        last_seen=now - timedelta(seconds=75)
    )

    page = alice_client.get("/").content.decode()

    card = page[page.index('id="workers"'):page.index("Recent models")]
    assert "training@gpu-box" in card
    assert "solo pool on gpu-box" in card
    assert '<span class="badge running">busy</span>' in card
    assert f"training job {job.pk}</a>" in card
    assert "for 3" in card  # minutes busy
    assert '<span class="badge failed">missing</span>' in card
    assert "inference, default" in card  # the per-run queue prefix is not shown
    assert "75 s ago" in card
    assert "No live worker serves inference, default" in card


def test_without_any_worker_the_card_says_none_has_started(alice_client: Client) -> None:
    page = alice_client.get("/").content.decode()

    assert "No worker has started yet" in page
    assert "No live worker serves training, inference, default" in page
