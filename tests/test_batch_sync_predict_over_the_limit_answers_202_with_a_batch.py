"""POST /api/models/<pk>/predict/ answers inline up to SYNC_PREDICT_MAX_TEXTS texts; one more
and it answers 202 with a batch job on the inference worker, whose CSV holds the same
predictions the inline answer would have given."""

from __future__ import annotations

import time

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from classification.models import BatchJob
from tests.batch_support import DEMO_SLICE, csv_rows, input_rows, start_inference_worker


@pytest.mark.worker
def test_predict_over_the_limit_becomes_a_batch_with_the_same_predictions(
    start_worker, media_root, trained_model, api_token
) -> None:
    assert settings.SYNC_PREDICT_MAX_TEXTS == 64  # the documented default
    start_inference_worker(start_worker)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    url = f"/api/models/{trained_model.pk}/predict/"
    articles = [{"title": r["title"], "abstract": r["abstract"]}
                for r in input_rows(DEMO_SLICE)[:65]]

    inline = client.post(url, {"articles": articles[:64]}, format="json")
    assert inline.status_code == 200
    assert len(inline.json()["predictions"]) == 64
    assert not BatchJob.objects.exists()

    accepted = client.post(url, {"articles": articles}, format="json")
    assert accepted.status_code == 202, accepted.content
    body = accepted.json()
    assert body["status"] == "queued"
    assert body["model_id"] == trained_model.pk
    assert "SYNC_PREDICT_MAX_TEXTS" in body["detail"]
    assert accepted["Location"] == f"http://testserver/api/batches/{body['id']}/"

    deadline = time.monotonic() + 60
    while (state := client.get(accepted["Location"]).json())["is_active"]:
        assert time.monotonic() < deadline, state
        time.sleep(0.1)
    assert state["status"] == "completed", state
    assert state["processed"] == state["total"] == 65

    result = client.get(state["result_url"])
    assert result.status_code == 200
    assert result["Content-Type"] == "text/csv"
    rows = csv_rows(b"".join(result.streaming_content))
    assert len(rows) == 65
    for row, prediction in zip(rows, inline.json()["predictions"], strict=False):
        assert row["predicted_labels"].split("|") == prediction["labels"] or (
            row["predicted_labels"] == "" and prediction["labels"] == []
        )
        for label, p in prediction["probabilities"].items():
            assert float(row[f"p_{label}"]) == pytest.approx(p, abs=5e-5)


@pytest.mark.django_db
def test_an_empty_article_among_many_is_refused_before_anything_is_queued(
    media_root, trained_model, api_token
) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    articles = [{"title": f"Heart failure {i}", "abstract": "Outcomes"} for i in range(70)]
    articles[9] = {"title": " ", "abstract": ""}
    response = client.post(f"/api/models/{trained_model.pk}/predict/", {"articles": articles},
                           format="json")
    assert response.status_code == 400
    assert response.json()["detail"] == (
        "Text 10 of 70 is empty; every text needs a title or an abstract."
    )
    assert not BatchJob.objects.exists()
