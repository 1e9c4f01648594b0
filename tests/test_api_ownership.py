"""The API is token-authenticated and scoped to the token's user: others get 404."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


@pytest.fixture
def alices_things(user, rows):
    dataset = rows.dataset(user, name="Alice private set")
    model = rows.model(user, dataset, name="Alice private model")
    job = rows.job(model, status="failed", reason="boom")
    return dataset, model, job


def api(token: str | None) -> APIClient:
    client = APIClient()
    if token:
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def test_every_endpoint_needs_a_token() -> None:
    client = api(None)
    for url in ("/api/datasets/", "/api/models/", "/api/jobs/", "/api/datasets/1/",
                "/api/models/1/", "/api/models/1/metrics/", "/api/jobs/1/"):
        assert client.get(url).status_code == 401, url
    assert client.post("/api/models/1/predict/", {"text": "x"}, format="json").status_code == 401


def test_another_user_gets_404_on_every_object_endpoint(other_api_token, alices_things) -> None:
    dataset, model, job = alices_things
    client = api(other_api_token)
    for url in (f"/api/datasets/{dataset.pk}/", f"/api/models/{model.pk}/",
                f"/api/models/{model.pk}/metrics/", f"/api/jobs/{job.pk}/"):
        response = client.get(url)
        assert response.status_code == 404, url
        assert b"Alice private" not in response.content
    for url in (f"/api/jobs/{job.pk}/cancel/", f"/api/jobs/{job.pk}/resume/"):
        assert client.post(url).status_code == 404, url
    assert client.post(f"/api/models/{model.pk}/predict/", {"text": "heart"},
                       format="json").status_code == 404
    assert client.delete(f"/api/datasets/{dataset.pk}/").status_code == 404


def test_lists_hold_only_the_users_own_things(other_api_token, alices_things) -> None:
    client = api(other_api_token)
    for url in ("/api/datasets/", "/api/models/", "/api/jobs/"):
        body = client.get(url).json()
        assert body["count"] == 0, url


def test_cannot_start_training_on_another_users_dataset(other_api_token, alices_things) -> None:
    from classification.models import MLModel

    dataset, _, _ = alices_things
    for url in ("/api/jobs/", "/api/models/"):
        response = api(other_api_token).post(
            url, {"dataset": dataset.pk, "model_type": "tfidf_logreg"}, format="json"
        )
        assert response.status_code == 400, url
        assert "dataset" in response.json(), url
    assert not MLModel.objects.filter(owner__username="bob").exists()


def test_the_owner_reads_them(api_token, alices_things) -> None:
    dataset, model, job = alices_things
    client = api(api_token)
    assert client.get(f"/api/datasets/{dataset.pk}/").json()["name"] == "Alice private set"
    assert client.get(f"/api/models/{model.pk}/").json()["headline_metrics"]["micro_f1"] == 0.81
    assert client.get(f"/api/jobs/{job.pk}/").json()["status"] == "failed"
    assert client.get("/api/models/").json()["count"] == 1
