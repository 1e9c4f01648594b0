"""The batch API: POST a file -> 202 with the batch and a Location; list, read, cancel and fetch
the CSV; another user's batch is a 404 on every route.

The task message is never sent here (the test's transaction never commits), so the batch is run
with the service the inference worker calls; the worker itself is in the other batch tests.
"""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from classification.batches.services import batch_job_run
from classification.models import BatchJob
from tests.batch_support import DEMO_SLICE, csv_rows

pytestmark = pytest.mark.django_db


def api(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def post_file(client: APIClient, model_id: int) -> dict:
    with DEMO_SLICE.open("rb") as handle:
        response = client.post(f"/api/models/{model_id}/batches/", {"file": handle},
                               format="multipart")
    assert response.status_code == 202, response.content
    body = response.json()
    assert response["Location"] == f"http://testserver/api/batches/{body['id']}/"
    return body


def test_a_file_posted_to_a_model_becomes_a_batch_whose_csv_the_owner_fetches(
    media_root, trained_model, api_token
) -> None:
    client = api(api_token)
    body = post_file(client, trained_model.pk)
    assert body["status"] == "queued"
    assert body["filename"] == "demo_slice.csv"
    assert body["is_active"] is True
    assert body["result_url"] is None
    assert client.get(f"/api/batches/{body['id']}/result/").status_code == 409

    listed = client.get("/api/batches/").json()
    assert [b["id"] for b in listed["results"]] == [body["id"]]

    assert batch_job_run(batch_id=body["id"]) == "completed"
    state = client.get(body["url"]).json()
    assert (state["status"], state["progress"], state["total"]) == ("completed", 100.0, 200)
    result = client.get(state["result_url"])
    assert result.status_code == 200
    assert "demo_slice-predictions.csv" in result["Content-Disposition"]
    assert len(csv_rows(b"".join(result.streaming_content))) == 200

    assert client.post(f"/api/batches/{body['id']}/cancel/").status_code == 400


def test_a_queued_batch_cancelled_over_the_api_ends_at_once_and_never_runs(
    media_root, trained_model, api_token
) -> None:
    client = api(api_token)
    body = post_file(client, trained_model.pk)
    response = client.post(f"/api/batches/{body['id']}/cancel/")
    assert response.status_code == 202
    assert response.json()["status"] == "cancelled"
    assert batch_job_run(batch_id=body["id"]) is None, "its late delivery does nothing"
    assert BatchJob.objects.get(pk=body["id"]).status == "cancelled"
    assert not [p for p in (media_root / "batches").rglob("*") if p.is_file()]


def test_another_users_batch_is_a_404_on_every_route(
    media_root, trained_model, api_token, other_api_token
) -> None:
    body = post_file(api(api_token), trained_model.pk)
    bob = api(other_api_token)
    for method, path in (("get", ""), ("post", "cancel/"), ("get", "result/")):
        response = getattr(bob, method)(f"/api/batches/{body['id']}/{path}")
        assert response.status_code == 404, path
    assert bob.get("/api/batches/").json()["results"] == []
    with DEMO_SLICE.open("rb") as handle:
        response = bob.post(f"/api/models/{trained_model.pk}/batches/", {"file": handle},
                            format="multipart")
    assert response.status_code == 404
    assert BatchJob.objects.get().status == "queued"


def test_an_untrained_model_or_a_missing_file_is_refused_with_a_reason(
    media_root, user, rows, api_token
) -> None:
    model = rows.model(user, rows.dataset(user), status="pending")
    client = api(api_token)
    with DEMO_SLICE.open("rb") as handle:
        response = client.post(f"/api/models/{model.pk}/batches/", {"file": handle},
                               format="multipart")
    assert response.status_code == 400
    assert "Train the model" in response.json()["detail"]
    assert client.post(f"/api/models/{model.pk}/batches/", {}, format="multipart").status_code \
        == 400
    assert not BatchJob.objects.exists()
