"""The REST API end to end: token, datasets, training start/cancel/resume, predict, schema."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from tests.import_support import api_import

pytestmark = pytest.mark.django_db
DEMO = Path(__file__).resolve().parent / "fixtures" / "demo_slice.csv"


@pytest.fixture
def client(api_token) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    return client


def test_a_token_is_issued_for_a_username_and_password(user) -> None:
    response = APIClient().post("/api/token/", {"username": "alice", "password": "alice-pass-123"})
    assert response.status_code == 200
    assert len(response.json()["token"]) == 40


def test_upload_list_and_read_a_dataset(client) -> None:
    upload = SimpleUploadedFile("demo_slice.csv", DEMO.read_bytes(), content_type="text/csv")
    body = api_import(client, {"file": upload, "name": "Demo"}, query="?expand=report")
    assert body["row_count"] == 200
    assert body["is_multilabel"] is True
    assert sorted(body["label_names"]) == ["cardiovascular", "hepatorenal", "neurological",
                                           "oncological"]
    assert sum(body["split_sizes"].values()) == 200
    assert "report" in body

    listing = client.get("/api/datasets/").json()
    assert listing["count"] == 1
    assert listing["results"][0]["id"] == body["id"]
    assert "report" not in listing["results"][0], "the report comes only with ?expand=report"
    assert client.get(f"/api/datasets/{body['id']}/").json()["name"] == "Demo"


def test_an_unreadable_upload_is_a_400_with_the_reason(client) -> None:
    upload = SimpleUploadedFile("empty.csv", b"title;abstract;group\n", content_type="text/csv")
    response = client.post("/api/datasets/", {"file": upload, "name": "x"}, format="multipart")
    assert response.status_code == 400
    assert "no data rows" in response.json()["file"][0]


def test_start_cancel_and_resume_a_job(client, user, rows, django_capture_on_commit_callbacks,
                                       monkeypatch) -> None:
    from classification.jobs import lifecycle

    sent = []
    monkeypatch.setattr(lifecycle, "_enqueue", lambda **kw: sent.append(kw))
    dataset = rows.dataset(user)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/jobs/", {
            "dataset": dataset.pk, "model_type": "tfidf_logreg", "name": "API model",
            "config": {"epochs": 1},
        }, format="json")
    assert response.status_code == 201, response.content
    job = response.json()
    assert job["status"] == "queued"
    assert len(sent) == 1

    status = client.get(f"/api/jobs/{job['id']}/").json()
    assert status["status"] == "queued"
    assert status["is_active"] is True

    cancelled = client.post(f"/api/jobs/{job['id']}/cancel/")
    assert cancelled.status_code == 202
    assert cancelled.json()["status"] == "cancelled"
    assert client.post(f"/api/jobs/{job['id']}/cancel/").status_code == 400

    with django_capture_on_commit_callbacks(execute=True):
        resumed = client.post(f"/api/jobs/{job['id']}/resume/")
    assert resumed.status_code == 202
    assert resumed.json()["status"] == "queued"
    assert resumed.json()["attempt"] == 2
    assert len(sent) == 2

    models = client.get("/api/models/").json()
    assert models["results"][0]["name"] == "API model"
    assert models["results"][0]["latest_job_id"] == job["id"]


def test_models_post_starts_training_too(client, user, rows, monkeypatch) -> None:
    from classification.jobs import lifecycle

    monkeypatch.setattr(lifecycle, "_enqueue", lambda **kw: None)
    dataset = rows.dataset(user)
    response = client.post("/api/models/", {"dataset": dataset.pk, "model_type": "tfidf_svm"},
                           format="json")
    assert response.status_code == 201
    created = client.get(f"/api/models/{response.json()['id']}/").json()
    assert created["model_type"] == "tfidf_svm"
    assert created["latest_job_id"] == response.json()["latest_job_id"] is not None


def test_unknown_model_type_is_rejected(client, user, rows) -> None:
    response = client.post("/api/jobs/", {"dataset": rows.dataset(user).pk,
                                          "model_type": "gpt5"}, format="json")
    assert response.status_code == 400
    assert "model_type" in response.json()


def test_metrics_endpoint_returns_the_full_dict(client, trained_model) -> None:
    body = client.get(f"/api/models/{trained_model.pk}/metrics/").json()
    assert body["status"] == "trained"
    assert {"micro_f1", "macro_f1", "per_label", "confusion"} <= set(body["metrics"])


def test_predict_one_many_and_articles(client, trained_model) -> None:
    url = f"/api/models/{trained_model.pk}/predict/"
    one = client.post(url, {"text": "Myocardial infarction and coronary stenting outcomes"},
                      format="json")
    assert one.status_code == 200, one.content
    prediction = one.json()["predictions"][0]
    assert set(prediction["probabilities"]) == set(trained_model.label_names)
    assert prediction["labels"]

    many = client.post(url, {"texts": ["Seizures in epilepsy", "Liver cirrhosis"]},
                       format="json").json()
    assert len(many["predictions"]) == 2

    articles = client.post(url, {"articles": [{"title": "Glioma", "abstract": "Brain tumour"}]},
                           format="json").json()
    assert len(articles["predictions"]) == 1


def test_predict_rejects_empty_text_and_ambiguous_input(client, trained_model) -> None:
    url = f"/api/models/{trained_model.pk}/predict/"
    assert client.post(url, {"texts": ["ok text", "   "]}, format="json").status_code == 400
    assert client.post(url, {"text": "a", "texts": ["b"]}, format="json").status_code == 400
    assert client.post(url, {}, format="json").status_code == 400


def test_predict_on_an_untrained_model_is_a_400(client, user, rows) -> None:
    model = rows.model(user, rows.dataset(user), status="pending")
    response = client.post(f"/api/models/{model.pk}/predict/", {"text": "x"}, format="json")
    assert response.status_code == 400
    assert "not trained" in response.json()["detail"]


def test_schema_and_offline_docs(client, user) -> None:
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    for path in ("/api/datasets/", "/api/models/", "/api/models/{id}/predict/",
                 "/api/jobs/{id}/cancel/", "/api/jobs/{id}/resume/"):
        assert path in paths, path

    web = APIClient()
    web.force_login(user)
    docs = web.get("/api/docs/")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in html
    assert "cdn.jsdelivr" not in html
