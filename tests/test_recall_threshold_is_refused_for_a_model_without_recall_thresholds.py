"""threshold=recall for a model saved before recall thresholds existed is refused where the
batch is asked for, with a sentence saying what to do, and nothing is saved: no row, no file,
no message. The service, the batch API, the Classify page's batch form and `predict` agree; the
same model still makes F1 batches."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from classification.batches.services import BatchError
from classification.models import BatchJob
from tests.batch_support import DEMO_SLICE
from tests.threshold_support import batch_create, format_2_model

pytestmark = pytest.mark.django_db

SAYS = "has no recall thresholds"


@pytest.fixture
def old_model(user: Any, rows: Any, tfidf_artifact: dict[str, Any], tmp_path: Path) -> Any:
    return format_2_model(user=user, rows=rows, tfidf_artifact=tfidf_artifact,
                          folder=tmp_path / "old")


def nothing_saved(media_root: Path) -> None:
    assert not BatchJob.objects.exists()
    batches = media_root / "batches"
    assert not batches.exists() or not any(p.is_file() for p in batches.rglob("*"))


def upload() -> SimpleUploadedFile:
    return SimpleUploadedFile("articles.csv", DEMO_SLICE.read_bytes(), content_type="text/csv")


def test_the_service_refuses_it_and_saves_nothing(user, media_root, old_model) -> None:
    with pytest.raises(BatchError, match=f"{SAYS}.*retrain it to use threshold=recall, or use "
                                         "threshold=f1"):
        batch_create(owner=user, ml_model=old_model, path=DEMO_SLICE, threshold="recall")
    nothing_saved(media_root)
    batch = batch_create(owner=user, ml_model=old_model, path=DEMO_SLICE, threshold="f1")
    assert batch.threshold == "f1"


def test_the_api_answers_400_and_saves_nothing(api_token, media_root, old_model) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    response = client.post(f"/api/models/{old_model.pk}/batches/",
                           {"file": upload(), "threshold": "recall"}, format="multipart")
    assert response.status_code == 400, response.content
    assert SAYS in response.json()["detail"]
    nothing_saved(media_root)


def test_the_classify_pages_batch_form_says_why_and_saves_nothing(
        alice_client, media_root, old_model) -> None:
    response = alice_client.post(reverse("classification:batch_create"), {
        "model": old_model.pk, "file": upload(), "threshold": "recall"}, follow=True)
    assert response.status_code == 200
    assert SAYS in response.content.decode()
    nothing_saved(media_root)


def test_predict_refuses_it_before_writing_anything(tmp_path, old_model) -> None:
    out = tmp_path / "out.csv"
    with pytest.raises(CommandError, match=SAYS):
        call_command("predict", str(old_model.pk), str(DEMO_SLICE), "--out", str(out),
                     "--threshold", "recall", stdout=io.StringIO())
    assert not out.exists()
