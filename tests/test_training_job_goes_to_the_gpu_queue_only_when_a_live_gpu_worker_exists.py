"""A training job's message goes to the GPU queue only while a live worker serves it; with no
GPU worker, a stale one or a stopped one, it goes to the CPU training queue, where a worker
always is. The job records the queue, and the message really waits in that Redis queue."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from classification import services
from classification.models import TrainingJob
from core import services as core_services
from core.broker import broker_task_ids
from core.models import WorkerHeartbeat


def gpu_worker(hostname: str = "gpu0@box", *, devices: str = "0") -> None:
    core_services.worker_heartbeat_beat(
        hostname=hostname, host="box", pid=321, queues=[settings.QUEUE_TRAINING_GPU],
        pool="solo", concurrency=1, started_at=timezone.now(), state="idle",
        facts={"devices": devices},
    )


def cpu_worker() -> None:
    core_services.worker_heartbeat_beat(
        hostname="training@box", host="box", pid=123, queues=[settings.QUEUE_TRAINING],
        pool="solo", concurrency=1, started_at=timezone.now(), state="idle",
    )


def create_job(dataset, user, capture) -> TrainingJob:
    with capture(execute=True):  # the real enqueue, sent to Redis on commit
        return services.training_job_create(
            owner=user, dataset=dataset, model_type="tfidf_logreg", name="Routed", config={}
        )


def waits_in(job: TrainingJob) -> list[str]:
    """The queues whose Redis list holds this job's message."""
    return [queue for queue in (settings.QUEUE_TRAINING, settings.QUEUE_TRAINING_GPU)
            if job.celery_task_id in (broker_task_ids(queue=queue) or set())]


@pytest.mark.django_db
def test_with_a_live_gpu_worker_the_job_waits_in_the_gpu_queue(
    clean_broker, slice_dataset, user, django_capture_on_commit_callbacks
) -> None:
    cpu_worker()
    gpu_worker()

    job = create_job(slice_dataset, user, django_capture_on_commit_callbacks)

    assert job.queue == settings.QUEUE_TRAINING_GPU
    assert waits_in(job) == [settings.QUEUE_TRAINING_GPU]
    assert f"queue: {settings.QUEUE_TRAINING_GPU} (1 live GPU worker(s))" in job.log_tail


@pytest.mark.django_db
def test_with_no_gpu_worker_at_all_the_job_waits_in_the_cpu_queue(
    clean_broker, slice_dataset, user, django_capture_on_commit_callbacks
) -> None:
    cpu_worker()

    job = create_job(slice_dataset, user, django_capture_on_commit_callbacks)

    assert job.queue == settings.QUEUE_TRAINING
    assert waits_in(job) == [settings.QUEUE_TRAINING]
    assert "no GPU worker is running" in job.log_tail


@pytest.mark.django_db
def test_a_gpu_worker_silent_past_the_timeout_does_not_draw_jobs(
    clean_broker, slice_dataset, user, django_capture_on_commit_callbacks
) -> None:
    gpu_worker()
    WorkerHeartbeat.objects.filter(hostname="gpu0@box").update(
        last_seen=timezone.now() - timedelta(seconds=settings.WORKER_HEARTBEAT_TIMEOUT + 5))

    job = create_job(slice_dataset, user, django_capture_on_commit_callbacks)

    assert job.queue == settings.QUEUE_TRAINING
    assert waits_in(job) == [settings.QUEUE_TRAINING]


@pytest.mark.django_db
def test_a_gpu_worker_that_shut_down_does_not_draw_jobs(
    clean_broker, slice_dataset, user, django_capture_on_commit_callbacks
) -> None:
    gpu_worker()
    assert core_services.worker_heartbeat_stop(hostname="gpu0@box", pid=321)

    job = create_job(slice_dataset, user, django_capture_on_commit_callbacks)

    assert job.queue == settings.QUEUE_TRAINING
    assert waits_in(job) == [settings.QUEUE_TRAINING]
