"""A transition writes its history row in the transaction of its UPDATE: a duplicate delivery,
a second worker or a late watchdog that loses the race writes no row, an illegal transition
writes none, and a transition rolled back with its caller's transaction leaves none behind."""

from __future__ import annotations

import pytest
from django.db import transaction

from classification import services
from classification.models import StatusChange, TrainingJob


@pytest.fixture
def job(slice_dataset, user) -> TrainingJob:
    return services.training_job_create(
        owner=user, dataset=slice_dataset, model_type="tfidf_logreg", name="Dup", config={}
    )


def _targets(job: TrainingJob) -> list[str]:
    return list(StatusChange.objects.filter(job=job).values_list("target", flat=True))


def test_a_second_claim_and_a_second_finish_write_nothing(job) -> None:
    assert services.training_job_claim(job=job) is True
    assert services.training_job_claim(job=job) is False  # the duplicate delivery
    assert services.training_job_finish(job_id=job.pk, target="stalled", reason="no heartbeat")
    # A late watchdog (or a crash handler) that lost the race to the first end.
    assert not services.training_job_finish(job_id=job.pk, target="failed", reason="late")
    assert _targets(job) == ["queued", "running", "stalled"]
    assert StatusChange.objects.get(job=job, target="stalled").reason == "no heartbeat"


def test_the_same_call_twice_on_the_queryset_writes_one_row(job) -> None:
    assert TrainingJob.objects.transition(job.pk, source="queued", target="running")
    assert not TrainingJob.objects.transition(job.pk, source="queued", target="running")
    assert _targets(job) == ["queued", "running"]


def test_an_illegal_transition_raises_and_writes_nothing(job) -> None:
    with pytest.raises(ValueError, match="Illegal TrainingJob transition queued -> completed"):
        TrainingJob.objects.transition(job.pk, source="queued", target="completed")
    assert _targets(job) == ["queued"]


def test_a_transition_rolled_back_with_its_callers_transaction_leaves_no_row(job) -> None:
    def claim_then_fail() -> None:
        with transaction.atomic():
            assert services.training_job_claim(job=job)
            raise RuntimeError("the caller failed after the claim")

    with pytest.raises(RuntimeError):
        claim_then_fail()
    job.refresh_from_db()
    assert job.status == "queued"
    assert _targets(job) == ["queued"]


def test_a_job_created_in_another_state_starts_its_history_there(job) -> None:
    other = TrainingJob.objects.create(ml_model=job.ml_model, status="failed", reason="boom")
    change = StatusChange.objects.get(job=other)
    assert (change.source, change.target, change.reason) == ("", "failed", "boom")
    assert change.at == other.created_at
