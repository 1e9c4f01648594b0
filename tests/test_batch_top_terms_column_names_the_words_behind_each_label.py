"""A batch asked for top terms gets a top_terms column: for each predicted label, the words that
pushed it up most, which are the words of that article the explanation ranks first. Without
the option, the CSV has no such column; a model kind that cannot be explained is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files import File
from django.urls import reverse

from classification import ml_models
from classification.batches import services, storage
from classification.batches.runner import batch_job_run
from tests.batch_support import csv_rows

pytestmark = pytest.mark.django_db

ARTICLES = (
    "title;abstract\n"
    "Statin therapy after myocardial infarction;Coronary heart failure and blood pressure.\n"
    "Seizure control in epilepsy;Antiepileptic drugs reduced seizures in the brain cortex.\n"
)


def run(user, model, path: Path, *, top_terms: bool) -> list[dict[str, str]]:
    with path.open("rb") as handle:
        batch = services.batch_job_create(owner=user, ml_model=model, top_terms=top_terms,
                                          uploaded_file=File(handle, name=path.name))
    assert batch_job_run(batch_id=batch.pk.hex) == "completed"
    batch.refresh_from_db()
    return csv_rows(storage.absolute(batch.result_path).read_bytes())


def test_each_predicted_label_lists_the_words_its_explanation_ranks_first(
        user, media_root, tmp_path, trained_model) -> None:
    path = tmp_path / "articles.csv"
    path.write_text(ARTICLES, encoding="utf-8")
    rows = run(user, trained_model, path, top_terms=True)
    classifier = ml_models.load_classifier(trained_model.artifact_path)
    for row in rows:
        predicted = [p for p in row["predicted_labels"].split("|") if p]
        cell = dict(part.split(": ", 1) for part in row["top_terms"].split("; "))
        assert list(cell) == predicted
        text = f"{row['title']}\n\n{row['abstract']}"
        expected = ml_models.explain(classifier, text, labels=predicted, top_k=5)
        for explanation in expected["explanations"]:
            words = [t["term"] for t in explanation["positive"]]
            assert cell[explanation["label"]] == ", ".join(words)
            assert words
            assert all(w.split()[0].lower() in text.lower() for w in words)


def test_without_the_option_there_is_no_top_terms_column(
        user, media_root, tmp_path, trained_model) -> None:
    path = tmp_path / "articles.csv"
    path.write_text(ARTICLES, encoding="utf-8")
    assert "top_terms" not in run(user, trained_model, path, top_terms=False)[0]


def test_the_classify_page_and_the_api_ask_for_top_terms(
        alice_client, user, media_root, tmp_path, trained_model, api_token) -> None:
    from rest_framework.test import APIClient

    from classification.models import BatchJob

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")

    path = tmp_path / "articles.csv"
    path.write_text(ARTICLES, encoding="utf-8")
    with path.open("rb") as handle:
        alice_client.post(reverse("classification:batch_create"),
                          {"model": trained_model.pk, "file": handle, "top_terms": "1"})
    with path.open("rb") as handle:
        response = api.post(
            f"/api/models/{trained_model.pk}/batches/", {"file": handle, "top_terms": "true"},
            format="multipart")
    assert response.status_code == 202, response.content
    assert list(BatchJob.objects.values_list("top_terms", flat=True)) == [True, True]


def test_an_ensemble_cannot_be_asked_for_top_terms(user, rows, tmp_path, trained_model) -> None:
    model = rows.model(user, rows.dataset(user), model_type="ensemble", status="trained",
                       artifact_path=trained_model.artifact_path)
    path = tmp_path / "articles.csv"
    path.write_text(ARTICLES, encoding="utf-8")
    with path.open("rb") as handle, pytest.raises(services.BatchError, match="Top terms"):
        services.batch_job_create(owner=user, ml_model=model, top_terms=True,
                                  uploaded_file=File(handle, name="articles.csv"))
