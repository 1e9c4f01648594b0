"""A model search on a real worker: its trials appear on the job page as they finish; Cancel
ends the job with the best model so far saved and usable; Resume continues the same Optuna
study in the app's database (trial numbers, scores and the time used carry over) until the
budget is spent, and the winner is a model that predicts like any other; deleting it drops
the study."""

from __future__ import annotations

import optuna
import pytest
from django.urls import reverse

from classification import services
from classification.jobs.searches import search_create
from classification.mlmodels.deletion import mlmodel_delete
from classification.mlmodels.searches import search_study_load
from classification.models import MLModel, TrainingJob
from tests.job_support import fast_env, wait_for, wait_for_job

CANDIDATES = ["tfidf_logreg", "tfidf_svm"]
BUDGET_MINUTES = 1.0  # room for a trial after the resume even when the cancel came late


def finished_trials(job: TrainingJob) -> list[dict]:
    job.refresh_from_db()
    return [row for row in job.leaderboard if row["state"] == "complete"]


def study_of(job: TrainingJob) -> optuna.Study:
    return search_study_load(job=job)


@pytest.mark.worker
def test_a_cancelled_search_keeps_its_best_model_and_resume_continues_the_study(
        start_worker, slice_dataset, alice_client, user) -> None:
    start_worker(**fast_env())
    job = search_create(owner=user, dataset=slice_dataset, time_budget_minutes=BUDGET_MINUTES,
                        candidates=CANDIDATES)
    assert job.ml_model.model_type == "search"
    assert job.config["search_candidates"] == CANDIDATES
    assert "search_storage" not in job.config  # a database URL may carry a password

    wait_for(lambda: len(finished_trials(job)) >= 3, timeout=90, what="three finished trials")
    page = alice_client.get(reverse("classification:job_detail", args=[job.pk])).content.decode()
    assert 'id="leaderboard"' in page
    services.training_job_cancel(job=job)
    job = wait_for_job(job, {"cancelled", "failed", "completed"}, timeout=60)
    assert job.status == "cancelled", job.reason
    assert "best model found so far" in job.reason
    assert "Resume continues the search" in job.reason

    model = MLModel.objects.get(pk=job.ml_model_id)
    assert model.status == MLModel.Status.TRAINED
    kept = model.metrics["search"]["winner"]
    assert kept["model_type"] in CANDIDATES
    assert model.metrics["evaluated_on"] == "validation"
    [prediction] = services.mlmodel_predict(ml_model=model, texts=["coronary artery disease"])
    assert set(prediction["probabilities"]) == set(model.label_names)

    study = study_of(job)
    before = {t.number: t.value for t in study.trials if t.state.name == "COMPLETE"}
    spent_before = study.user_attrs["spent_seconds"]
    assert len(before) >= 3
    # The kept model is a finished trial of this study: the best one, or an untuned default
    # that the best did not beat by more than the noise of the scoring rows.
    assert before[kept["trial"]] == pytest.approx(kept["validation_macro_f1"])
    assert (kept["validation_macro_f1"] == pytest.approx(max(before.values()))
            or study.trials[kept["trial"]].user_attrs["default"]), (kept, before)
    assert spent_before < BUDGET_MINUTES * 60

    job = services.training_job_resume(job=job)
    # The kept model stays usable while the search goes on.
    assert MLModel.objects.get(pk=job.ml_model_id).status == MLModel.Status.TRAINED
    job = wait_for_job(job, {"completed", "failed", "cancelled", "stalled"}, timeout=180)
    assert job.status == "completed", job.reason
    assert job.attempt == 2

    study = study_of(job)
    after = {t.number: t.value for t in study.trials if t.state.name == "COMPLETE"}
    assert {n: after[n] for n in before} == before  # the same study, continued
    assert len(after) > len(before)
    assert max(after) > max(before)  # numbering went on rather than restarting at 0
    spent = study.user_attrs["spent_seconds"]
    assert spent_before < spent < BUDGET_MINUTES * 60 + 30

    model = MLModel.objects.get(pk=job.ml_model_id)
    assert model.status == MLModel.Status.TRAINED
    search = model.metrics["search"]
    assert search["winner"]["validation_macro_f1"] >= kept["validation_macro_f1"]
    assert search["trials"]["complete"] >= len(after) - 1  # an ensemble may count as one
    assert model.metrics["evaluated_on"] == "test"
    assert services.mlmodel_predict(ml_model=model, texts=["coronary artery disease"])

    detail = alice_client.get(reverse("classification:model_detail", args=[model.pk]))
    html = detail.content.decode()
    assert 'id="search-winner"' in html
    assert search["winner"]["model_type"] in html

    # Deleting the model drops its study from the database with its files.
    mlmodel_delete(ml_model=model)
    with pytest.raises(KeyError):
        study_of(job)
