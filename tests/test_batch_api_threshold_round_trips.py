"""POST /api/models/<pk>/batches/ takes `threshold` (f1 by default, or recall), stores it on the
batch, and answers it back, with `calibrated`, in the 202, the detail and the list; an unknown
threshold is a 400 naming the field."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from classification.models import BatchJob
from tests.batch_support import DEMO_SLICE

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(api_token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    return client


def create(client: APIClient, model: Any, **fields: str) -> Any:
    upload = SimpleUploadedFile("articles.csv", DEMO_SLICE.read_bytes(), content_type="text/csv")
    return client.post(f"/api/models/{model.pk}/batches/", {"file": upload, **fields},
                       format="multipart")


def test_the_threshold_asked_for_is_stored_and_answered_everywhere(
        client: APIClient, media_root, trained_model) -> None:
    recall = create(client, trained_model, threshold="recall")
    assert recall.status_code == 202, recall.content
    # The demo model's `select` kept no map on its 17 validation rows: nothing recalibrated.
    assert (recall.json()["threshold"], recall.json()["calibrated"]) == ("recall", False)
    default = create(client, trained_model)
    assert default.status_code == 202, default.content
    assert default.json()["threshold"] == "f1"
    stored = dict(BatchJob.objects.values_list("id", "threshold"))
    assert {key.hex: value for key, value in stored.items()} == {
        recall.json()["id"]: "recall", default.json()["id"]: "f1"}
    assert client.get(recall.json()["url"]).json()["threshold"] == "recall"
    listed = client.get("/api/batches/").json()
    items = listed["results"] if isinstance(listed, dict) else listed
    assert {b["id"]: b["threshold"] for b in items} == {recall.json()["id"]: "recall",
                                                         default.json()["id"]: "f1"}


def test_an_unknown_threshold_is_refused_naming_the_field(client: APIClient, media_root,
                                                          trained_model) -> None:
    response = create(client, trained_model, threshold="precision")
    assert response.status_code == 400
    assert "threshold" in response.json()
    assert not BatchJob.objects.exists()
