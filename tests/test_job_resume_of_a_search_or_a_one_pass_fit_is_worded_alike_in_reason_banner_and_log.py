"""After a stall or a cancel, a model search's reason, the banner the Resume button leaves and
the job's log all say what Resume really does: the search continues its Optuna study, with its
finished trials kept and the best so far named (never "it will start over", never a
checkpoint). A TF-IDF job, which saves no checkpoints, says everywhere that training restarts
from scratch, quickly. (Transformers: test_job_stall_reason_resume_banner_and_log_agree_….)"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import optuna
import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from classification.jobs.progress import ProgressWriter
from classification.jobs.reaper import training_jobs_reconcile_on_worker_start
from classification.jobs.training import stopped_reason
from classification.mlmodels.searches import (
    search_storage,
    search_study_delete,
    search_study_name,
)
from classification.models import TrainingJob
from classification.views.presenters import job_reason_plain
from core import processes

# The study is written through its own connection: Django's test transaction would hold
# SQLite's write lock against it.
pytestmark = pytest.mark.django_db(transaction=True)

KINDS = ["tfidf_logreg", "tfidf_svm"]
KEPT = "3 finished trials kept, the best so far is tfidf_svm (validation macro-F1 0.750)"


@pytest.fixture
def made_studies() -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for name in names:  # a flush empties Django's tables only
        search_study_delete(name=name)


def running_job(rows, user, *, model_type: str) -> TrainingJob:
    config = {"time_budget_minutes": 5, "search_candidates": KINDS} if model_type == "search" \
        else {}
    model = rows.model(user, rows.dataset(user), name=f"{model_type} job", model_type=model_type,
                       status="training")
    return rows.job(model, status="running", config=config, log_tail="trial 2 finished")


def add_study(job: TrainingJob, made_studies: list[str]) -> None:
    """Three finished trials and one failed one, 1.5 of the 5 minutes spent, as a search leaves
    its study in the app's database."""
    name = search_study_name(job=job)
    made_studies.append(name)
    study = optuna.create_study(study_name=name, storage=search_storage(), direction="maximize")
    kind = optuna.distributions.CategoricalDistribution(KINDS)
    for model_type, value in [("tfidf_logreg", 0.61), ("tfidf_svm", 0.75),
                              ("tfidf_logreg", 0.70)]:
        study.add_trial(optuna.trial.create_trial(
            params={"model_type": model_type}, distributions={"model_type": kind}, value=value))
    study.add_trial(optuna.trial.create_trial(
        params={"model_type": "tfidf_svm"}, distributions={"model_type": kind},
        state=optuna.trial.TrialState.FAIL))
    study.set_user_attr("spent_seconds", 90.0)


def stall_as_a_restarted_worker_finds_it(job: TrainingJob) -> TrainingJob:
    """The worker that ran the job is gone (its PID is dead): the worker start marks it."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    TrainingJob.objects.filter(pk=job.pk).update(worker_host=processes.hostname(),
                                                 worker_pid=gone.pid)
    assert job.pk in training_jobs_reconcile_on_worker_start()
    job.refresh_from_db()
    assert job.status == "stalled"
    return job


def resume(client, job: TrainingJob) -> tuple[str, TrainingJob]:
    response = client.post(reverse("classification:job_resume", args=[job.pk]))
    assert response.status_code == 302
    banner = " ".join(str(m) for m in get_messages(response.wsgi_request))
    job.refresh_from_db()
    assert job.status in ("queued", "failed")  # failed: only if no broker took the message
    return banner, job


def test_a_stalled_search_says_its_study_continues_in_reason_banner_and_log(
        alice_client, user, rows, made_studies) -> None:
    job = running_job(rows, user, model_type="search")
    add_study(job, made_studies)
    job = stall_as_a_restarted_worker_finds_it(job)

    reason = job_reason_plain(status=job.status, reason=job.reason, model_type="search")
    page = alice_client.get(reverse("classification:job_detail", args=[job.pk])).content.decode()
    poll = alice_client.get(reverse("classification:job_progress", args=[job.pk])).json()
    banner, job = resume(alice_client, job)

    assert f"resume continues the search's study: {KEPT}; 1.5 of 5 min of the budget used" \
        in reason
    assert poll["reason_plain"] == reason
    assert KEPT in page
    assert banner == (f"Resumed: the search continues its study: {KEPT}; 1.5 of 5 min of the "
                      "budget used.")
    assert f"Resume requested: the search continues its study: {KEPT}" in job.log_tail
    for said in (reason, banner, job.log_tail):
        assert "start over" not in said
        assert "starts over" not in said
        assert "checkpoint" not in said


def test_a_cancelled_search_names_the_trials_its_resume_keeps(user, rows, made_studies) -> None:
    job = running_job(rows, user, model_type="search")
    add_study(job, made_studies)

    reason, checkpoint = stopped_reason(ProgressWriter(job, interval=1.0), job_id=job.pk,
                                        saved=None)

    assert checkpoint == ""
    assert reason.startswith("Cancelled on request during training; ")
    assert reason.endswith(f"resume continues the search's study: {KEPT}; 1.5 of 5 min of the "
                           "budget used")


def test_a_search_stalled_before_its_study_began_says_it_starts_over(
        alice_client, user, rows) -> None:
    job = stall_as_a_restarted_worker_finds_it(running_job(rows, user, model_type="search"))

    reason = job_reason_plain(status=job.status, reason=job.reason, model_type="search")
    banner, job = resume(alice_client, job)

    what = "no trial of the search had started, so it starts over with its full budget"
    assert f"nothing to resume from: {what}" in reason
    assert banner == f"Resumed from the start: {what}."
    assert f"Resume requested: {what}" in job.log_tail


def test_a_stalled_tfidf_job_says_it_restarts_from_scratch_without_promising_a_checkpoint(
        alice_client, user, rows) -> None:
    job = stall_as_a_restarted_worker_finds_it(running_job(rows, user, model_type="tfidf_svm"))

    reason = job_reason_plain(status=job.status, reason=job.reason, model_type="tfidf_svm")
    page = alice_client.get(reverse("classification:job_detail", args=[job.pk])).content.decode()
    banner, job = resume(alice_client, job)

    what = "a one-pass fit keeps no checkpoints, so training restarts from scratch (quick)"
    assert f"nothing to resume from: {what}" in reason
    assert "continues from" not in reason
    assert "last checkpoint" not in reason
    assert "keeps its last checkpoint" not in page  # the Cancel button's confirmation
    assert banner == f"Resumed from the start: {what}."
    assert f"Resume requested: {what}" in job.log_tail


@pytest.mark.parametrize(("model_type", "expected"), [
    ("search", "Resume continues the search's study, keeping its finished trials"),
    ("tfidf_logreg", "Resume restarts training from scratch (quick): a one-pass fit keeps no"),
    ("minilm", "Resume continues from the newest saved checkpoint, or starts over without one."),
])
def test_a_reason_without_a_resume_note_is_completed_for_the_kind_of_model(
        model_type: str, expected: str) -> None:
    plain = job_reason_plain(status="cancelled", reason="Cancelled before a worker started it",
                             model_type=model_type)

    assert expected in plain
