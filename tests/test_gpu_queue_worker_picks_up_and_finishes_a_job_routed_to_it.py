"""A real Celery worker consuming only the GPU training queue, started the way start_m1.sh
starts one per GPU (CUDA_VISIBLE_DEVICES=<index>), draws the next job to its queue and trains it
to completion (on the CPU here: this machine has no GPU, and TF-IDF never needs one). Its
heartbeat row says which GPU it was given."""

from __future__ import annotations

import pytest
from django.conf import settings

from classification import services
from core.models import WorkerHeartbeat
from tests.job_support import DONE, fast_env, wait_for, wait_for_job


@pytest.mark.worker
def test_a_worker_on_the_gpu_queue_alone_trains_the_job_routed_to_it(
    start_worker, slice_dataset, user
) -> None:
    worker = start_worker(queues=(settings.QUEUE_TRAINING_GPU,),
                          **fast_env(CUDA_VISIBLE_DEVICES="0"))
    row = wait_for(lambda: WorkerHeartbeat.objects.filter(pid=worker.pid).first(), 30,
                   "the GPU worker's heartbeat row")
    assert row.is_live()
    assert row.queues == [settings.QUEUE_TRAINING_GPU]
    assert row.devices == "0"

    job = services.training_job_create(
        owner=user, dataset=slice_dataset, model_type="tfidf_logreg", name="On the GPU queue",
        config={})
    assert job.queue == settings.QUEUE_TRAINING_GPU

    job = wait_for_job(job, DONE, 120)
    assert job.status == "completed", (job.reason, job.log_tail)
    assert job.ml_model.status == "trained"
    assert job.worker_pid == worker.pid
    assert f"queue: {settings.QUEUE_TRAINING_GPU} (1 live GPU worker(s))" in job.log_tail
