"""The API has one representation per resource: a job, a model, a dataset and a batch carry the
same keys whether they come back from a create, a list, a detail or an action (cancel, resume),
and a job or a batch says the same as its page's progress JSON under every key the two share.

Nothing reaches a worker here: the creates' task messages are captured, never sent.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from tests.batch_support import DEMO_SLICE
from tests.import_support import import_run_last

pytestmark = pytest.mark.django_db

# The names the API chose, and the other dialect's names that must not come back.
JOB_KEYS = {"id", "model_id", "status", "phase", "progress", "epoch", "step", "loss",
            "eta_seconds", "reason", "is_active", "is_resumable", "created_at", "started_at",
            "finished_at", "updated_at"}
OTHER_DIALECT = {"model", "progress_percentage", "current_epoch", "current_step", "last_loss",
                 "latest_job", "dataset"}


@pytest.fixture
def api(api_token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    return client


def answer(response: Any, code: int) -> dict[str, Any]:
    assert response.status_code == code, response.content
    return response.json()


def created_at(response: Any, code: int, detail_url: str) -> dict[str, Any]:
    """The body of a create, whose Location names the detail that reads the same resource."""
    body = answer(response, code)
    assert response["Location"] == "http://testserver" + detail_url.format(**body)
    return body


def listed(api: APIClient, url: str, pk: Any) -> dict[str, Any]:
    rows = [row for row in answer(api.get(url), 200)["results"] if row["id"] == pk]
    assert len(rows) == 1, rows
    return rows[0]


def upload(api: APIClient, url: str, **fields: Any) -> Any:
    with DEMO_SLICE.open("rb") as handle:
        return api.post(url, {"file": handle, **fields}, format="multipart")


def test_a_job_has_the_same_keys_when_started_listed_read_cancelled_and_resumed(
    api: APIClient, user: Any, rows: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    dataset = rows.dataset(user)
    with django_capture_on_commit_callbacks(execute=False) as sent:
        created = created_at(api.post("/api/jobs/", {
            "dataset": dataset.pk, "model_type": "tfidf_logreg", "name": "One dialect",
        }, format="json"), 201, "/api/jobs/{id}/")
    assert len(sent) == 1, "the start queues its training message on commit"
    url = f"/api/jobs/{created['id']}/"
    in_list = listed(api, "/api/jobs/", created["id"])
    detail = answer(api.get(url), 200)

    assert set(created) == set(in_list) == set(detail)
    assert set(detail) >= JOB_KEYS
    assert not OTHER_DIALECT & set(detail)
    assert created == in_list == detail, "the same row reads the same everywhere"

    cancelled = answer(api.post(f"{url}cancel/"), 202)
    with django_capture_on_commit_callbacks(execute=False):
        resumed = answer(api.post(f"{url}resume/"), 202)
    assert set(cancelled) == set(resumed) == set(detail)
    assert (cancelled["status"], cancelled["is_resumable"]) == ("cancelled", True)
    assert (resumed["status"], resumed["attempt"], resumed["is_active"]) == ("queued", 2, True)


def test_the_heavy_job_fields_come_only_when_expanded_and_match_the_job_page(
    api: APIClient, alice_client: Client, user: Any, rows: Any,
) -> None:
    job = rows.job(rows.model(user, rows.dataset(user), status="training"))
    plain = answer(api.get(f"/api/jobs/{job.pk}/"), 200)
    expanded = answer(api.get(f"/api/jobs/{job.pk}/?expand=history,log_tail"), 200)
    assert set(expanded) - set(plain) == {"history", "history_length", "history_reset",
                                          "log_tail"}
    assert expanded["history_length"] == 2
    assert expanded["log_tail"] == "epoch 1 done"
    later = answer(api.get(f"/api/jobs/{job.pk}/?expand=history&since=1&last=:5"), 200)
    assert later["history"] == [job.metrics_history[1]], "only the points after `since`"
    assert api.get(f"/api/jobs/{job.pk}/?expand=everything").status_code == 400

    page = alice_client.get(f"/jobs/{job.pk}/progress/?log=1").json()
    shared = (set(page) & set(expanded)) - {"updated_at", "heartbeat_age_seconds"}
    assert {"model_id", "status", "phase", "progress", "epoch", "step", "loss", "eta_seconds",
            "reason", "is_active", "is_resumable", "history", "log_tail"} <= shared
    assert {key: expanded[key] for key in shared} == {key: page[key] for key in shared}
    assert (expanded["progress"], expanded["epoch"], expanded["step"], expanded["loss"]) == (
        42.0, 1.2, 12, 0.52)


def test_a_model_has_the_same_keys_when_created_listed_and_read(
    api: APIClient, user: Any, rows: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    dataset = rows.dataset(user)
    with django_capture_on_commit_callbacks(execute=False):
        created = created_at(api.post("/api/models/", {
            "dataset": dataset.pk, "model_type": "tfidf_svm", "name": "Made over the API",
        }, format="json"), 201, "/api/models/{id}/")
    trained = rows.model(user, dataset)  # with metrics, so headline_metrics has numbers
    for model_id in (created["id"], trained.pk):
        in_list = listed(api, "/api/models/", model_id)
        detail = answer(api.get(f"/api/models/{model_id}/"), 200)
        assert set(in_list) == set(detail) == set(created)
        assert in_list == detail
    assert created == answer(api.get(f"/api/models/{created['id']}/"), 200)

    assert {"dataset_id", "latest_job_id", "headline_metrics", "status"} <= set(created)
    assert not OTHER_DIALECT & set(created)
    assert created["dataset_id"] == dataset.pk
    assert created["latest_job_id"] == user.ml_models.get(pk=created["id"]).training_jobs.get().pk
    assert created["headline_metrics"] == {}
    headline = answer(api.get(f"/api/models/{trained.pk}/"), 200)["headline_metrics"]
    assert headline == {"micro_f1": 0.81, "macro_f1": 0.77, "weighted_f1": 0.8,
                        "subset_accuracy": 0.6, "hamming_loss": 0.09, "roc_auc_macro": 0.9,
                        "n": 20}
    metrics = answer(api.get(f"/api/models/{trained.pk}/metrics/"), 200)
    assert metrics["model_id"] == trained.pk


def test_a_dataset_has_the_same_keys_when_uploaded_listed_and_read(
    api: APIClient, media_root: Any,
) -> None:
    # The upload answers with its import (202); the worker's task makes the dataset.
    queued = created_at(upload(api, "/api/datasets/", name="Slice"), 202,
                        "/api/datasets/imports/{id}/")
    assert import_run_last().status == "completed"
    followed = answer(api.get(queued["url"]), 200)
    assert set(followed) == set(queued)
    created = answer(api.get(followed["dataset_url"]), 200)
    in_list = listed(api, "/api/datasets/", created["id"])
    detail = answer(api.get(f"/api/datasets/{created['id']}/"), 200)
    assert set(created) == set(in_list) == set(detail)
    assert created == in_list == detail
    assert "report" not in detail, "the large report is asked for by name"

    expanded = answer(api.get(f"/api/datasets/{created['id']}/?expand=report"), 200)
    assert set(expanded) == set(detail) | {"report"}
    assert expanded["report"]
    assert set(listed(api, "/api/datasets/?expand=report", created["id"])) == set(expanded)


def test_a_batch_has_the_same_keys_when_created_listed_read_and_cancelled(
    api: APIClient, alice_client: Client, media_root: Any, trained_model: Any, settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        created = created_at(upload(api, f"/api/models/{trained_model.pk}/batches/"), 202,
                             "/api/batches/{id}/")
    in_list = listed(api, "/api/batches/", created["id"])
    detail = answer(api.get(created["url"]), 200)
    cancelled = answer(api.post(f"{created['url']}cancel/"), 202)
    assert set(created) == set(in_list) == set(detail) == set(cancelled)
    assert created == in_list == detail
    assert {"model_id", "model_name", "status", "progress", "eta_seconds", "is_active",
            "url", "result_url"} <= set(detail)
    assert not OTHER_DIALECT & set(detail)
    assert cancelled["status"] == "cancelled"

    page = alice_client.get(f"/classify/batches/{created['id']}/progress/").json()
    shared = (set(page) & set(cancelled)) - {"created_at", "updated_at"}
    assert {"id", "model_id", "model_name", "status", "progress", "eta_seconds", "phase_display",
            "processed", "total", "is_active"} <= shared
    assert {key: cancelled[key] for key in shared} == {key: page[key] for key in shared}

    # Too many texts for an inline predict: the batch they became, and why.
    settings.SYNC_PREDICT_MAX_TEXTS = 1
    with django_capture_on_commit_callbacks(execute=False):
        became = answer(api.post(f"/api/models/{trained_model.pk}/predict/",
                                 json.dumps({"texts": ["Heart failure", "Epilepsy"]}),
                                 content_type="application/json"), 202)
    assert set(became) == set(detail) | {"detail"}
    assert "SYNC_PREDICT_MAX_TEXTS" in became["detail"]
