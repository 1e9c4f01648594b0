"""Resume routes a job again by the same rule as its creation: a job that went to the GPU queue
goes to the CPU queue when its GPU worker has gone by then, and back to the GPU queue once one
is live again. Its log says where each attempt waits."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.utils import timezone

from classification import services
from core import services as core_services
from core.broker import broker_task_ids


def gpu_worker() -> None:
    core_services.worker_heartbeat_beat(
        hostname="gpu1@box", host="box", pid=321, queues=[settings.QUEUE_TRAINING_GPU],
        pool="solo", concurrency=1, started_at=timezone.now(), state="idle",
        facts={"devices": "1"},
    )


@pytest.mark.django_db
def test_a_resumed_job_follows_the_gpu_worker_that_left_and_came_back(
    clean_broker, slice_dataset, user, django_capture_on_commit_callbacks
) -> None:
    gpu, cpu = settings.QUEUE_TRAINING_GPU, settings.QUEUE_TRAINING
    gpu_worker()
    with django_capture_on_commit_callbacks(execute=True):
        job = services.training_job_create(
            owner=user, dataset=slice_dataset, model_type="tfidf_logreg", name="Resumed",
            config={})
    assert job.queue == gpu
    services.training_job_cancel(job=job)

    core_services.worker_heartbeat_stop(hostname="gpu1@box", pid=321)
    with django_capture_on_commit_callbacks(execute=True):
        job = services.training_job_resume(job=job)
    assert (job.status, job.attempt, job.queue) == ("queued", 2, cpu)
    assert job.celery_task_id in broker_task_ids(queue=cpu)
    assert job.log_tail.splitlines()[-1] == f"queue: {cpu} (no GPU worker is running)"

    services.training_job_cancel(job=job)
    gpu_worker()
    with django_capture_on_commit_callbacks(execute=True):
        job = services.training_job_resume(job=job)
    assert (job.attempt, job.queue) == (3, gpu)
    assert job.celery_task_id in broker_task_ids(queue=gpu)
    assert job.celery_task_id not in broker_task_ids(queue=cpu)
