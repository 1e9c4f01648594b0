"""An export is a model that predicts as the app does, or nothing: an untrained model and an
ensemble (one folder cannot carry its members and their weighting) are refused with a 409 that
says why, on the API and on the model page, and a person outside the project gets a 404."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from classification.jobs import lifecycle
from classification.jobs.ensembles import ensemble_create
from classification.jobs.training import run_training
from classification.models import MLModel, TrainingJob
from tests.no_label_support import model_trained


def trained_on(*, dataset: Any, user: Any, kind: str) -> MLModel:
    """A second member on the same dataset, trained as a worker trains it."""
    model = MLModel.objects.create(owner=user, name=kind, model_type=kind, dataset=dataset)
    job = TrainingJob.objects.create(ml_model=model, config={}, total_epochs=1)
    assert lifecycle.training_job_claim(job=job)
    assert run_training(job_id=job.pk) == 0
    model.refresh_from_db()
    assert model.is_trained
    return model


@pytest.fixture
def api(api_token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    return client


def test_an_untrained_model_is_a_409_saying_there_is_nothing_to_export_yet(
        db: None, api: APIClient, import_file: Callable[..., Any], user: Any) -> None:
    model = MLModel.objects.create(owner=user, name="Later", model_type="tfidf_logreg",
                                   dataset=import_file(Path("tests/fixtures/demo_slice.csv")))
    response = api.get(f"/api/models/{model.pk}/export/")
    assert response.status_code == 409
    assert "is not trained" in response.json()["detail"]
    assert "nothing to export yet" in response.json()["detail"]


def test_an_ensemble_is_refused_naming_why_on_the_api_and_the_model_page(
        transactional_db: None, api: APIClient, import_file: Callable[..., Any], user: Any,
        other_api_token: str, settings: Any, tmp_path: Path) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    first = model_trained(import_file=import_file, user=user, name="Member 1")
    members = [first, trained_on(dataset=first.dataset, user=user, kind="tfidf_svm")]
    job = ensemble_create(owner=user, member_ids=[m.pk for m in members], name="Both")
    assert lifecycle.training_job_claim(job=job)
    assert run_training(job_id=job.pk) == 0
    ensemble = MLModel.objects.get(pk=job.ml_model_id)
    assert ensemble.is_trained

    response = api.get(f"/api/models/{ensemble.pk}/export/")
    assert response.status_code == 409
    detail = response.json()["detail"]
    assert detail.startswith("This model (Ensemble) cannot be exported: an ensemble averages")
    assert "Export each member from its own model page instead." in detail

    browser = Client()
    browser.force_login(user)
    page = browser.get(f"/models/{ensemble.pk}/export/", follow=True)
    assert page.status_code == 200
    assert "Export each member from its own model page instead." in page.content.decode()
    member_page = browser.get(f"/models/{members[0].pk}/").content.decode()
    assert f'href="/models/{members[0].pk}/export/"' in member_page
    assert "Download (Hugging Face / skops folder)" in member_page

    outsider = APIClient()
    outsider.credentials(HTTP_AUTHORIZATION=f"Token {other_api_token}")
    assert outsider.get(f"/api/models/{members[0].pk}/export/").status_code == 404


def test_the_openapi_schema_documents_the_zip_and_the_409(db: None, api: APIClient) -> None:
    import json

    schema = json.loads(api.get("/api/schema/?format=json").content)
    operation = schema["paths"]["/api/models/{id}/export/"]["get"]
    assert "application/zip" in operation["responses"]["200"]["content"]
    assert "409" in operation["responses"]
