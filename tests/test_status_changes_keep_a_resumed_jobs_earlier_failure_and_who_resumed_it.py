"""A job that fails, is resumed and completes has one history row per status it entered, in
order: queued -> running -> failed -> queued -> running -> completed. The resume clears the
job's reason, but the failure's reason stays in its row and on the job page, and the row of
the resume names who resumed it (the claims and the ends are the system's)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from django.urls import reverse

from classification import services
from classification.history.selectors import status_changes_for, status_history_rows
from classification.jobs import training
from classification.models import TrainingJob
from projects.services import member_set

FAILURE = "CUDA out of memory while training step 12 (batch of 32)"


@pytest.fixture
def job(slice_dataset, user) -> TrainingJob:
    # Inside the test transaction on_commit never fires, so nothing reaches the broker.
    return services.training_job_create(
        owner=user, dataset=slice_dataset, model_type="tfidf_logreg", name="History",
        config={},
    )


def _fail_resume_and_complete(job: TrainingJob, client, tmp_path: Path) -> TrainingJob:
    assert services.training_job_claim(job=job)
    assert services.training_job_finish(job_id=job.pk, target="failed", reason=FAILURE)
    # Resumed from the job page by its owner: the view passes the user through.
    response = client.post(reverse("classification:job_resume", args=[job.pk]))
    assert response.status_code == 302
    job.refresh_from_db()
    assert job.status == "queued"
    assert job.reason == ""  # the job's own reason is gone...
    assert services.training_job_claim(job=job)
    clf = SimpleNamespace(device_plan=None, label_names=["a", "b"], multi_label=True)
    assert training.complete(job, clf=clf, artifact=tmp_path / "artifact", metrics={})
    job.refresh_from_db()
    return job


def test_every_status_the_job_entered_is_a_row_and_the_failure_reason_is_kept(
    job, user, alice_client, tmp_path
) -> None:
    job = _fail_resume_and_complete(job, alice_client, tmp_path)
    assert job.status == "completed"
    assert job.attempt == 2

    changes = list(status_changes_for(job=job))
    assert [(c.source, c.target) for c in changes] == [
        ("", "queued"), ("queued", "running"), ("running", "failed"),
        ("failed", "queued"), ("queued", "running"), ("running", "completed"),
    ]
    # ...but not from its history.
    assert changes[2].reason == FAILURE
    # Who: the creator and the person resuming; None (the system) for the worker's changes.
    assert [c.actor_id for c in changes] == [user.pk, None, None, user.pk, None, None]
    assert all(c.batch_id is None for c in changes)
    assert [c.at for c in changes] == sorted(c.at for c in changes)

    rows = status_history_rows(job=job)
    assert rows[2]["reason"] == FAILURE
    assert rows[3]["actor"] == "alice"
    assert rows[1]["actor"] is None


def test_the_job_page_shows_the_history_with_the_earlier_failure_and_who_resumed_it(
    job, alice_client, tmp_path
) -> None:
    job = _fail_resume_and_complete(job, alice_client, tmp_path)
    page = alice_client.get(reverse("classification:job_detail", args=[job.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    start = html.index('id="status-history"')
    history = html[start:html.index("</table>", start)]
    assert "<h2>History</h2>" in history
    assert FAILURE in history
    assert "failed → " in history
    assert "alice" in history
    assert "system" in history
    assert history.count('<tr data-target=') == 6


def test_a_member_who_resumes_anothers_job_is_the_one_recorded(job, user, other_user) -> None:
    member_set(actor=user, project=job.ml_model.project, member=other_user, role="maintainer")
    assert services.training_job_cancel(job=job, actor=other_user).status == "cancelled"
    services.training_job_resume(job=job, actor=other_user)
    cancelled, resumed = list(status_changes_for(job=job))[1:]
    assert (cancelled.source, cancelled.target, cancelled.actor_id) == (
        "queued", "cancelled", other_user.pk)
    assert cancelled.reason == "Cancelled before a worker started it"
    assert (resumed.source, resumed.target, resumed.actor_id) == (
        "cancelled", "queued", other_user.pk)
