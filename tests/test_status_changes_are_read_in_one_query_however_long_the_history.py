"""The history is read with its actors in one query, and the job and batch pages make as many
queries for a long history as for a short one."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from classification import services
from classification.history.selectors import status_changes_for
from classification.models import TrainingJob


@pytest.fixture
def job(slice_dataset, user) -> TrainingJob:
    return services.training_job_create(
        owner=user, dataset=slice_dataset, model_type="tfidf_logreg", name="Long", config={}
    )


def _fail_and_resume(job: TrainingJob, *, times: int, actor) -> None:
    for attempt in range(times):
        assert services.training_job_claim(job=job)
        services.training_job_finish(job_id=job.pk, target="failed", reason=f"boom {attempt}")
        services.training_job_resume(job=job, actor=actor)


def test_the_selector_reads_rows_and_actors_in_one_query(job, user,
                                                         django_assert_num_queries) -> None:
    _fail_and_resume(job, times=3, actor=user)
    with django_assert_num_queries(1):
        rows = [(c.target, c.reason, c.actor.username if c.actor_id else None)
                for c in status_changes_for(job=job)]
    assert len(rows) == 1 + 3 * 3
    assert [r for _, r, _ in rows if r.startswith("boom")] == ["boom 0", "boom 1", "boom 2"]


def test_the_selector_wants_exactly_one_subject() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        status_changes_for()


def test_the_job_page_query_count_does_not_grow_with_the_history(job, user,
                                                                 alice_client) -> None:
    url = reverse("classification:job_detail", args=[job.pk])

    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert alice_client.get(url).status_code == 200
        return len(queries)

    _fail_and_resume(job, times=1, actor=user)
    short = count()
    _fail_and_resume(job, times=5, actor=user)
    assert count() == short
