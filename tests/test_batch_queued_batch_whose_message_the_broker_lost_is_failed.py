"""A queued batch whose task message the broker lost (Redis restarted empty) would wait forever:
the reaper fails it with a reason once it is older than `stale_seconds`, and leaves alone a
queued batch whose message is still waiting in the inference queue."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
import redis
from django.conf import settings
from django.utils import timezone

from classification.batches.services import BATCH_TASK, LOST_MESSAGE_REASON, batch_jobs_reap
from classification.models import BatchJob
from core.queueing import task_send
from tests.batch_support import DEMO_SLICE, batch_files, create_batch

pytestmark = pytest.mark.django_db


@pytest.fixture
def inference_queue(clean_broker) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    yield client
    client.delete(settings.QUEUE_INFERENCE)  # no worker of a later test may run our message


def test_a_queued_batch_without_its_message_is_failed_and_one_with_it_waits(
    inference_queue, media_root, trained_model, user
) -> None:
    # Inside the test transaction on_commit never fires: neither batch's message was sent...
    lost = create_batch(owner=user, ml_model=trained_model, path=DEMO_SLICE)
    waiting = create_batch(owner=user, ml_model=trained_model, path=DEMO_SLICE)
    # ...so send one of them by hand, as batch_job_create does once its row commits.
    task_send(name=BATCH_TASK, args=(waiting.pk.hex,), task_id=waiting.celery_task_id)
    assert inference_queue.llen(settings.QUEUE_INFERENCE) == 1

    assert batch_jobs_reap(stale_seconds=60) == [], "both are younger than stale_seconds"
    # Both queued five minutes ago (a resumed batch is judged by when it was queued again).
    five_minutes_ago = timezone.now() - timedelta(minutes=5)
    BatchJob.objects.update(created_at=five_minutes_ago, updated_at=five_minutes_ago)

    assert batch_jobs_reap(stale_seconds=60) == [lost.pk.hex]
    lost.refresh_from_db()
    assert lost.status == BatchJob.Status.FAILED
    assert lost.reason == LOST_MESSAGE_REASON
    assert batch_files(lost) == set()
    waiting.refresh_from_db()
    assert waiting.status == BatchJob.Status.QUEUED
    assert batch_files(waiting)
