"""queued -> running happens once: a second claim (duplicate delivery, second worker) does nothing,
and a cancelled queued job can no longer be claimed."""

from __future__ import annotations

import os

import pytest

from classification import services
from classification.models import MLModel, TrainingJob


@pytest.fixture
def queued_job(slice_dataset, user) -> TrainingJob:
    # Inside the test transaction on_commit never fires, so nothing reaches the broker.
    return services.training_job_create(
        owner=user, dataset=slice_dataset, model_type="tfidf_logreg", name="Once", config={}
    )


def test_the_first_claim_wins_and_the_second_does_nothing(queued_job: TrainingJob) -> None:
    assert services.training_job_claim(job=queued_job) is True
    assert services.training_job_claim(job=queued_job) is False
    queued_job.refresh_from_db()
    assert queued_job.status == "running"
    assert queued_job.worker_pid == os.getpid()
    assert MLModel.objects.get(pk=queued_job.ml_model_id).status == "training"


def test_a_queued_job_cancels_at_once_and_cannot_then_be_claimed(queued_job) -> None:
    job = services.training_job_cancel(job=queued_job)
    assert job.status == "cancelled"
    assert job.cancel_requested
    assert services.training_job_claim(job=job) is False


def test_resume_without_a_checkpoint_says_it_restarts_from_scratch(queued_job) -> None:
    services.training_job_cancel(job=queued_job)
    job = services.training_job_resume(job=queued_job)
    assert job.status == "queued"
    assert job.attempt == 2
    assert not job.cancel_requested
    assert "restarts from scratch" in job.log_tail
    with pytest.raises(ValueError, match="only failed, stalled or cancelled"):
        services.training_job_resume(job=job)


def test_an_unknown_model_type_is_refused_before_anything_is_created(slice_dataset, user):
    with pytest.raises(ValueError, match="Unknown model type"):
        services.training_job_create(owner=user, dataset=slice_dataset, model_type="gpt9",
                                     name="x", config={})
    assert not MLModel.objects.exists()
