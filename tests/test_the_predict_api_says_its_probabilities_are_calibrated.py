"""POST /api/models/<pk>/predict/ reports calibrated probabilities and says so (`calibrated`),
with the thresholds that chose the labels (`threshold`: f1 by default, or recall); a model
saved before calibration says `calibrated: false` and refuses threshold=recall with what to
do; an unknown threshold, or recall over the inline limit, is a 400 naming the field. A batch
says whether its model's probabilities are calibrated, in the list and the detail alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from classification.models import BatchJob
from tests.threshold_support import format_2_model

TEXTS = ["Myocardial infarction and coronary stenting outcomes",
         "Seizure control with levetiracetam in adult epilepsy",
         "Hepatorenal syndrome in decompensated cirrhosis"]


@pytest.fixture
def client(api_token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    return client


@pytest.fixture
def old_model(user: Any, rows: Any, tfidf_artifact: dict[str, Any], tmp_path: Path) -> Any:
    """The same model as MedLitBot saved it before calibration existed (format 2)."""
    return format_2_model(user=user, rows=rows, tfidf_artifact=tfidf_artifact,
                          folder=tmp_path / "old")


def test_predictions_are_calibrated_and_say_so(client: APIClient, trained_model: Any) -> None:
    url = f"/api/models/{trained_model.pk}/predict/"
    body = client.post(url, {"texts": TEXTS}, format="json")
    assert body.status_code == 200, body.content
    assert body.json()["calibrated"] is True
    assert body.json()["threshold"] == "f1"


def test_threshold_recall_flags_at_least_the_f1_labels(client: APIClient,
                                                       trained_model: Any) -> None:
    url = f"/api/models/{trained_model.pk}/predict/"
    f1 = client.post(url, {"texts": TEXTS}, format="json").json()
    recall = client.post(url, {"texts": TEXTS, "threshold": "recall"}, format="json")
    assert recall.status_code == 200, recall.content
    assert recall.json()["threshold"] == "recall"
    assert recall.json()["calibrated"] is True
    for a, b in zip(f1["predictions"], recall.json()["predictions"], strict=True):
        assert a["probabilities"] == b["probabilities"]
    assert sum(len(p["labels"]) for p in recall.json()["predictions"]) >= sum(
        len(p["labels"]) for p in f1["predictions"])


def test_a_model_saved_before_calibration_says_so(client: APIClient, old_model: Any) -> None:
    url = f"/api/models/{old_model.pk}/predict/"
    body = client.post(url, {"texts": TEXTS}, format="json")
    assert body.status_code == 200, body.content
    assert body.json()["calibrated"] is False
    refused = client.post(url, {"texts": TEXTS, "threshold": "recall"}, format="json")
    assert refused.status_code == 400
    assert "saved before recall thresholds existed: retrain it" in refused.json()["detail"]


def test_bad_thresholds_are_refused_naming_the_field(client: APIClient, trained_model: Any,
                                                     settings: Any) -> None:
    url = f"/api/models/{trained_model.pk}/predict/"
    unknown = client.post(url, {"texts": TEXTS, "threshold": "precision"}, format="json")
    assert unknown.status_code == 400
    assert "threshold" in unknown.json()


def test_more_texts_than_answered_inline_become_a_batch_that_keeps_the_recall_threshold(
        client: APIClient, trained_model: Any, old_model: Any, settings: Any) -> None:
    many = ["an article about the heart"] * (settings.SYNC_PREDICT_MAX_TEXTS + 1)
    over = client.post(f"/api/models/{trained_model.pk}/predict/",
                       {"texts": many, "threshold": "recall"}, format="json")
    assert over.status_code == 202, over.content
    assert BatchJob.objects.get(pk=over.json()["id"]).threshold == "recall"
    refused = client.post(f"/api/models/{old_model.pk}/predict/",
                          {"texts": many, "threshold": "recall"}, format="json")
    assert refused.status_code == 400
    assert "recall thresholds" in refused.json()["detail"]
    assert not BatchJob.objects.filter(ml_model=old_model).exists()


def test_a_batch_says_whether_its_probabilities_are_calibrated(
        client: APIClient, user: Any, trained_model: Any, old_model: Any) -> None:
    new = BatchJob.objects.create(owner=user, ml_model=trained_model, filename="new.csv",
                                  status=BatchJob.Status.COMPLETED)
    old = BatchJob.objects.create(owner=user, ml_model=old_model, filename="old.csv",
                                  status=BatchJob.Status.COMPLETED)
    assert client.get(f"/api/batches/{new.pk.hex}/").json()["calibrated"] is True
    assert client.get(f"/api/batches/{old.pk.hex}/").json()["calibrated"] is False
    listed = client.get("/api/batches/").json()
    items = listed["results"] if isinstance(listed, dict) else listed
    assert {b["filename"]: b["calibrated"] for b in items} == {"new.csv": True,
                                                                "old.csv": False}
