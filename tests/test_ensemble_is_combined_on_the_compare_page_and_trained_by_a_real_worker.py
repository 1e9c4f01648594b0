"""Two models trained on one dataset are combined from the Compare page: the ensemble trains
as a job on a real worker, its page lists the members with their weights, it predicts, and it
keeps predicting after a member model is deleted. Models of different datasets, untrained or
foreign models are refused with the reason, and nothing is created."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string
from django.urls import reverse

from classification import services
from classification.jobs.ensembles import ensemble_create
from classification.ml_models import clear_classifier_cache
from classification.mlmodels.deletion import mlmodel_delete
from classification.models import MLModel, TrainingJob
from tests.job_support import fast_env, wait_for_job


def trained(user, dataset, model_type: str) -> MLModel:
    job = services.training_job_create(owner=user, dataset=dataset, model_type=model_type,
                                       name=model_type, config={})
    job = wait_for_job(job, {"completed", "failed"}, timeout=120)
    assert job.status == "completed", job.reason
    return MLModel.objects.get(pk=job.ml_model_id)


@pytest.mark.worker
def test_the_compare_page_combines_two_models_into_an_ensemble_that_outlives_them(
        start_worker, slice_dataset, alice_client, user) -> None:
    start_worker(**fast_env())
    members = [trained(user, slice_dataset, t) for t in ("tfidf_logreg", "tfidf_svm")]
    ids = [m.pk for m in members]

    page = alice_client.get(reverse("classification:model_compare"), {"ids": ids})
    html = page.content.decode()
    assert "scored on the same held-out test split" in html
    assert 'id="ensemble-form"' in html

    response = alice_client.post(reverse("classification:ensemble_create"),
                                 {"ids": ids, "name": "Both TF-IDF"})
    assert response.status_code == 302
    job = TrainingJob.objects.get(ml_model__name="Both TF-IDF")
    assert response["Location"] == reverse("classification:job_detail", args=[job.pk])
    job = wait_for_job(job, {"completed", "failed"}, timeout=120)
    assert job.status == "completed", job.reason
    ensemble = MLModel.objects.get(pk=job.ml_model_id)
    assert ensemble.model_type == "ensemble"
    assert ensemble.parameters["member_ids"] == ids
    assert {"micro_f1", "macro_f1"} <= set(ensemble.metrics)

    detail = alice_client.get(reverse("classification:model_detail", args=[ensemble.pk]))
    html = detail.content.decode()
    assert 'id="ensemble-members"' in html
    assert html.count(">tfidf_") >= 2
    before = services.mlmodel_predict(ml_model=ensemble, texts=["coronary heart failure"])

    # The include the model page uses needs only the model: weights and member scores come
    # from the artifact, names from the model's parameters.
    card = render_to_string("classification/includes/ensemble_members.html", {"model": ensemble})
    assert 'id="ensemble-members"' in card
    assert card.count("/models/") >= 2
    assert "This ensemble" in card
    assert render_to_string("classification/includes/ensemble_members.html",
                            {"model": members[0]}).strip() == ""

    mlmodel_delete(ml_model=members[0])
    clear_classifier_cache()  # read the ensemble back from disk, without the deleted member
    after = services.mlmodel_predict(ml_model=ensemble, texts=["coronary heart failure"])
    assert after == before
    assert "deleted (its copy lives on" in alice_client.get(
        reverse("classification:model_detail", args=[ensemble.pk])).content.decode()
    card = render_to_string("classification/includes/ensemble_members.html", {"model": ensemble})
    assert "tfidf_logreg <span class=\"muted\">deleted (its copy lives on" in card


@pytest.mark.django_db
def test_models_of_different_datasets_untrained_or_foreign_are_refused(
        user, other_user, rows, alice_client) -> None:
    first, second = rows.dataset(user, name="A"), rows.dataset(user, name="B")
    a = rows.model(user, first, artifact_path="/nonexistent/a")
    b = rows.model(user, second, artifact_path="/nonexistent/b")
    pending = rows.model(user, first, status=MLModel.Status.PENDING)
    foreign = rows.model(other_user, rows.dataset(other_user))
    cases = [([a.pk, b.pk], "same dataset"), ([a.pk, pending.pk], "Only trained models"),
             ([a.pk, foreign.pk], "No model you can see"), ([a.pk], "between 2 and 8")]
    for ids, message in cases:
        with pytest.raises(ValueError, match=message):
            ensemble_create(owner=user, member_ids=ids)
    response = alice_client.post(reverse("classification:ensemble_create"),
                                 {"ids": [a.pk, b.pk]}, follow=True)
    assert "same dataset" in response.content.decode()
    page = alice_client.get(reverse("classification:model_compare"), {"ids": [a.pk, b.pk]})
    html = page.content.decode()
    assert "different test rows, so their scores are not comparable" in html
    assert 'id="ensemble-form"' not in html
    assert not MLModel.objects.filter(model_type="ensemble").exists()
    assert not TrainingJob.objects.exists()
    with pytest.raises(ValueError, match="Compare page"):
        services.training_job_create(owner=user, dataset=first, model_type="ensemble",
                                     name="direct", config={})
