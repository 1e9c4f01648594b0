"""Adapt an encoder to your literature: the page (linked from the models list and the New model
page) and POST /api/adaptations/ create the same queued adapt job from the person's datasets
and finished batches; a source outside their projects, an unfinished batch, a base that is no
local transformer, a setting out of range or a role that may not train is refused with the
reason, and nothing is saved."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from classification.models import BatchJob, MLModel, TrainingJob
from projects.models import Role
from projects.services import member_set, project_personal

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(api_token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    return client


def _batch(owner: Any, dataset: Any, status: str = BatchJob.Status.COMPLETED) -> BatchJob:
    model = MLModel.objects.create(owner=owner, name="For batches", model_type="tfidf_logreg",
                                   dataset=dataset, project_id=dataset.project_id)
    return BatchJob.objects.create(owner=owner, ml_model=model, filename="articles.csv",
                                   status=status, project_id=dataset.project_id)


def _saved() -> tuple[int, int]:
    return (MLModel.objects.filter(model_type="adapt").count(), TrainingJob.objects.count())


def test_the_page_is_linked_offers_what_the_person_may_read_and_queues_the_job(
        alice_client: Any, user: Any, other_user: Any, rows: Any) -> None:
    dataset = rows.dataset(user, name="Cardiology")
    rows.dataset(other_user, name="Bobs private set")
    done, running = _batch(user, dataset), _batch(user, dataset, BatchJob.Status.RUNNING)
    url = reverse("classification:adapt_new")
    assert url in alice_client.get(reverse("classification:model_list")).content.decode()
    assert url in alice_client.get(reverse("classification:model_new")).content.decode()
    page = alice_client.get(url).content.decode()
    assert "Adapt an encoder to your literature" in page
    assert "Cardiology" in page
    assert "Bobs private set" not in page
    assert f'value="{done.pk}"' in page
    assert f'value="{running.pk}"' not in page
    assert 'value="minilm"' in page
    assert 'value="custom"' not in page
    assert re.search(r'<input type="checkbox" name="training_only"[^>]* checked', page)

    response = alice_client.post(url, {
        "name": "MiniLM for cardiology", "base": "minilm", "datasets": [dataset.pk],
        "batches": [done.pk], "mlm_probability": "0.2", "epochs": "2",
        "training_only": "on"})
    job = TrainingJob.objects.get(ml_model__model_type="adapt")
    assert response.status_code == 302
    assert response["Location"] == reverse("classification:job_detail", args=[job.pk])
    assert job.status == "queued"
    assert job.ml_model.name == "MiniLM for cardiology"
    assert job.config["adapt_datasets"] == [str(dataset.pk)]
    assert job.config["adapt_batches"] == [done.pk.hex]
    assert job.config["adapt_base"] == "minilm"
    assert job.config["mlm_probability"] == 0.2
    assert job.config["epochs"] == 2
    assert job.config["adapt_training_only"] is True


def test_the_page_refuses_bad_input_and_saves_nothing(
        alice_client: Any, bob_client: Any, user: Any, other_user: Any, rows: Any) -> None:
    dataset = rows.dataset(user)
    bobs = rows.dataset(other_user)
    url = reverse("classification:adapt_new")
    good = {"base": "minilm", "datasets": [dataset.pk], "mlm_probability": "0.15",
            "epochs": "1", "training_only": "on"}
    for bad in ({"datasets": []}, {"datasets": [bobs.pk]}, {"base": "tfidf_svm"},
                {"mlm_probability": "0.9"}, {"epochs": "0"},
                {"batches": [_batch(user, dataset, BatchJob.Status.RUNNING).pk]}):
        response = alice_client.post(url, {**good, **bad})
        assert response.status_code == 200, bad
        assert 'class="errorlist' in response.content.decode(), bad
    # Bob only reviews in Alice's project: he may not train there, page or forged post.
    member_set(actor=user, project=project_personal(user=user), member=other_user,
               role=Role.REVIEWER)
    session = bob_client.session
    session["project_id"] = dataset.project_id
    session.save()
    assert bob_client.get(url).status_code == 403
    assert bob_client.post(url, good).status_code == 403
    assert _saved() == (0, 0)


def test_the_api_answers_202_with_the_queued_job(api: APIClient, user: Any, rows: Any) -> None:
    dataset = rows.dataset(user)
    done = _batch(user, dataset)
    response = api.post("/api/adaptations/", {
        "datasets": [dataset.pk], "batches": [done.pk.hex], "name": "Adapted",
        "config": {"adapt_base": "minilm", "epochs": 1, "adapt_training_only": False}},
        format="json")
    assert response.status_code == 202, response.json()
    job = TrainingJob.objects.get(ml_model__model_type="adapt")
    assert response.json()["id"] == job.pk
    assert response["Location"].endswith(f"/api/jobs/{job.pk}/")
    assert job.status == "queued"
    assert job.config["adapt_training_only"] is False
    assert job.config["adapt_batches"] == [done.pk.hex]


def test_the_api_refuses_bad_input_on_its_field_and_saves_nothing(
        api: APIClient, user: Any, other_user: Any, rows: Any) -> None:
    dataset = rows.dataset(user)
    bobs = rows.dataset(other_user)
    running = _batch(user, dataset, BatchJob.Status.RUNNING)
    cases = [
        ({"datasets": []}, "datasets", None),
        ({"datasets": [bobs.pk]}, "datasets", f"No such dataset: {bobs.pk}."),
        ({"datasets": [dataset.pk], "batches": ["nope"]}, "batches", "No such batch: nope."),
        ({"datasets": [dataset.pk], "batches": [running.pk.hex]}, "batches", "has not completed"),
        ({"datasets": [dataset.pk], "config": {"adapt_base": "tfidf_svm"}}, "config",
         "transformer encoder"),
        ({"datasets": [dataset.pk], "config": {"mlm_probability": 0.9}}, "config", None),
        ({"datasets": [dataset.pk], "config": {"no_such": 1}}, "config", "Unknown setting."),
    ]
    for body, field, message in cases:
        response = api.post("/api/adaptations/", body, format="json")
        assert response.status_code == 400, (body, response.json())
        assert field in response.json(), (body, response.json())
        if message:
            assert message in str(response.json()[field]), (body, response.json())
    assert _saved() == (0, 0)
