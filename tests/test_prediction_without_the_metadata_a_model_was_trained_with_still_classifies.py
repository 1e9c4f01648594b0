"""A model trained with journal and MeSH (metadata_fields auto, the real training process body)
classifies an article that lacks them, a file without those columns and an API request without
them: a missing field is left out, never an error. Where the input has the journal, prediction,
evaluation and the API all pass it on, so the model reads what it learned from."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from classification import ml_models, services
from classification.batches.exports import mlmodel_predict_items
from classification.jobs import lifecycle
from classification.jobs.training import run_training
from classification.models import MLModel, TrainingJob
from classification.selectors import mlmodel_artifact_dir
from tests.metadata_support import journal_corpus, journal_csv


@pytest.fixture
def journal_model(transactional_db: None, import_file: Callable[..., Any], user: Any,
                  settings: Any, tmp_path: Path) -> MLModel:
    """TF-IDF trained on a dataset whose label only the journal tells."""
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    dataset = import_file(journal_csv(tmp_path / "journals.csv", journal_corpus(240, seed=1)))
    model = MLModel.objects.create(owner=user, name="Journals", model_type="tfidf_logreg",
                                   dataset=dataset)
    job = TrainingJob.objects.create(ml_model=model, config={}, total_epochs=1)
    assert lifecycle.training_job_claim(job=job)
    assert run_training(job_id=job.pk) == 0
    job.refresh_from_db()
    assert job.status == "completed", job.reason
    assert "metadata: journal, MeSH as tokens" in job.log_tail
    model.refresh_from_db()
    return model


def test_the_model_records_the_fields_it_was_trained_with(journal_model: MLModel) -> None:
    assert journal_model.metrics["metadata"] == {"fields": ["journal", "mesh"],
                                                 "shown": "journal, MeSH"}
    clf = ml_models.load_classifier(str(mlmodel_artifact_dir(ml_model=journal_model)))
    assert (clf.config.metadata_used, clf.config.metadata_style) == (["journal", "mesh"],
                                                                      "tokens")


def test_an_article_without_journal_or_mesh_is_classified(journal_model: MLModel) -> None:
    text = "Palan mirtov sellan.\n\nDexqua rolan tisel."
    for metadata in (None, [{}], [{"keywords": ["unused"]}]):
        texts = services.mlmodel_texts(ml_model=journal_model, texts=[text], metadata=metadata)
        assert texts == [text]
        [prediction] = services.mlmodel_predict(ml_model=journal_model, texts=texts)
        assert len(prediction["labels"]) == 1


def test_where_the_article_has_its_journal_the_model_reads_it(journal_model: MLModel) -> None:
    rows = journal_corpus(40, seed=9)
    texts = services.mlmodel_texts(
        ml_model=journal_model, texts=[f"{r['title']}\n\n{r['abstract']}" for r in rows],
        metadata=[{"journal": [r["journal"]]} for r in rows])
    predictions = services.mlmodel_predict(ml_model=journal_model, texts=texts)
    right = sum(p["labels"] == [r["label"]] for p, r in zip(predictions, rows, strict=True))
    assert right >= 36


def test_a_file_without_the_metadata_columns_is_classified_and_evaluated(
        journal_model: MLModel, tmp_path: Path) -> None:
    rows = journal_corpus(60, seed=5)
    bare = journal_csv(tmp_path / "bare.csv", rows, metadata=False)
    items = list(mlmodel_predict_items(ml_model=journal_model, path=bare))
    assert len(items) == 60
    assert all(item["predicted_labels"] for item in items)
    without = services.mlmodel_evaluate_file(ml_model=journal_model, path=bare)
    full = services.mlmodel_evaluate_file(
        ml_model=journal_model, path=journal_csv(tmp_path / "full.csv", rows))
    assert without["n"] == full["n"] == 60
    # The same rows: at chance from their text alone, right where the journal is read.
    assert without["macro_f1"] < 0.75 < 0.9 < full["macro_f1"]


def test_the_api_classifies_articles_with_and_without_metadata(
        journal_model: MLModel, user: Any) -> None:
    client = APIClient()
    client.force_authenticate(user)
    rows = journal_corpus(20, seed=11)
    url = f"/api/models/{journal_model.pk}/predict/"
    bare = client.post(url, {"articles": [{"title": r["title"], "abstract": r["abstract"]}
                                          for r in rows]}, format="json")
    assert bare.status_code == 200, bare.content
    assert all(p["labels"] for p in bare.json()["predictions"])
    given = client.post(url, {"articles": [
        {"title": r["title"], "abstract": r["abstract"], "journal": r["journal"],
         "mesh": r["mesh"]} for r in rows]}, format="json")
    assert given.status_code == 200, given.content
    right = sum(p["labels"] == [r["label"]]
                for p, r in zip(given.json()["predictions"], rows, strict=True))
    assert right >= 18


def test_a_batch_passes_the_journal_on_and_classifies_a_file_without_it(
        journal_model: MLModel, user: Any, tmp_path: Path, media_root: Path) -> None:
    from classification.batches.selectors import batch_job_items
    from classification.batches.services import batch_job_run
    from tests.batch_support import create_batch

    rows = journal_corpus(40, seed=13)
    right = {}
    for name, with_metadata in (("full", True), ("bare", False)):
        path = journal_csv(tmp_path / f"{name}.csv", rows, metadata=with_metadata)
        batch = create_batch(owner=user, ml_model=journal_model, path=path)
        assert batch_job_run(batch_id=batch.pk.hex) == "completed"
        batch.refresh_from_db()
        items = list(batch_job_items(batch=batch))
        assert len(items) == 40
        right[name] = sum(i["predicted_labels"] == [r["label"]]
                          for i, r in zip(items, rows, strict=True))
    assert right["full"] >= 36
