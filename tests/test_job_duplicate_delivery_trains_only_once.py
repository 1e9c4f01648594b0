"""The seed's call delivered twice (same task id) to two workers trains exactly once."""

from __future__ import annotations

import uuid

import pytest

from classification.models import MLModel, TrainingJob
from classification.tasks import start_model_training
from tests.job_support import (
    DONE,
    fast_env,
    wait_for,
    wait_for_job,
)


@pytest.mark.worker
def test_two_deliveries_of_one_message_to_two_workers_train_once(
    start_worker, slice_dataset
) -> None:
    first = start_worker(**fast_env())
    second = start_worker(**fast_env())
    model = MLModel.objects.create(
        name="Dup", model_type="tfidf_logreg", dataset=slice_dataset, parameters={}
    )
    task_id = str(uuid.uuid4())
    for _ in range(2):  # what a broker redelivery looks like: the same message id again
        start_model_training.apply_async((model.id, {"total_epochs": 1}), task_id=task_id)

    job = wait_for(lambda: TrainingJob.objects.filter(ml_model=model).first(), 30, "a job")
    job = wait_for_job(job, DONE, 90)
    assert job.status == "completed", (job.reason, job.log_tail)
    assert TrainingJob.objects.filter(ml_model=model).count() == 1
    assert job.attempt == 1
    assert job.celery_task_id == task_id

    def both_consumed() -> bool:
        logs = first.log() + second.log()
        return logs.count(f"[{task_id}] received") >= 2 or logs.count(task_id) >= 4

    wait_for(both_consumed, 20, "both deliveries to be consumed")
    claims = (first.log() + second.log()).count(f"job {job.pk} claimed")
    refusals = (first.log() + second.log()).count("this delivery does nothing")
    assert (claims, refusals) == (1, 1)
