"""Resume adds the wall time the ended attempt ran (claim to end) to the job's spent_seconds,
and a search's budget counts from the new attempt's start less that time: Cancel and Resume
hand a search no extra minutes (an 8-minute budget once ran 10 min 51 s)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from classification import services
from classification.jobs.searches import search_create
from classification.mlmodels.searches import search_clock_start
from classification.models import TrainingJob


@pytest.mark.django_db
def test_each_resume_adds_the_ended_attempts_wall_time(slice_dataset, user,
                                                      django_capture_on_commit_callbacks) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        job = search_create(owner=user, dataset=slice_dataset, time_budget_minutes=8,
                            candidates=["tfidf_logreg"])
    now = timezone.now()
    for attempt, ran in enumerate((144.0, 30.0), start=1):
        TrainingJob.objects.filter(pk=job.pk).update(
            status="cancelled", started_at=now - timedelta(seconds=ran), finished_at=now)
        with django_capture_on_commit_callbacks(execute=False):
            job = services.training_job_resume(job=job)
        assert job.attempt == attempt + 1
    assert job.spent_seconds == pytest.approx(174.0)

    # The next attempt is claimed now: its budget clock starts 174 s in the past.
    TrainingJob.objects.filter(pk=job.pk).update(status="running", started_at=now)
    job.refresh_from_db()
    assert search_clock_start(job=job) == pytest.approx(now.timestamp() - 174.0)
