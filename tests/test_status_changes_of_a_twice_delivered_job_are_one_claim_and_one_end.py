"""A training message delivered twice to two real workers leaves one history: created queued,
one claim (queued -> running, by the system) and one end; the losing delivery writes no row."""

from __future__ import annotations

import uuid

import pytest

from classification.history.selectors import status_changes_for
from classification.models import MLModel, TrainingJob
from classification.tasks import start_model_training
from tests.job_support import DONE, fast_env, wait_for, wait_for_job


@pytest.mark.worker
def test_two_deliveries_to_two_workers_write_one_claim_and_one_end(
    start_worker, slice_dataset
) -> None:
    first = start_worker(**fast_env())
    second = start_worker(**fast_env())
    model = MLModel.objects.create(
        name="Twice", model_type="tfidf_logreg", dataset=slice_dataset, parameters={}
    )
    task_id = str(uuid.uuid4())
    for _ in range(2):  # a broker redelivery: the same message id again
        start_model_training.apply_async((model.id, {"total_epochs": 1}), task_id=task_id)

    job = wait_for(lambda: TrainingJob.objects.filter(ml_model=model).first(), 30, "a job")
    job = wait_for_job(job, DONE, 90)
    assert job.status == "completed", (job.reason, job.log_tail)
    wait_for(lambda: (first.log() + second.log()).count("this delivery does nothing") >= 1,
             20, "the second delivery to be turned away")

    changes = list(status_changes_for(job=job))
    assert [(c.source, c.target) for c in changes] == [
        ("", "queued"), ("queued", "running"), ("running", "completed"),
    ]
    # The seed's call created the job for the model's creator; the worker's changes are the
    # system's.
    assert [c.actor_id for c in changes[1:]] == [None, None]
