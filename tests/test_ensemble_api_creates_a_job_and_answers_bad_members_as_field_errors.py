"""POST /api/models/ensemble/ combines the caller's trained models of one dataset into a queued
ensemble job and answers with the new model; members of different datasets, untrained, foreign,
nested or too few are refused as errors of `member_ids`, and nothing is created. An ensemble
cannot be trained from a dataset through POST /api/models/, and cannot be explained."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from classification.engine.ensemble import EnsembleClassifier
from classification.ml_models import TrainConfig, create_classifier
from classification.models import MLModel, TrainingJob

pytestmark = pytest.mark.django_db
URL = "/api/models/ensemble/"


def members(user: Any, rows: Any, tfidf_artifact: dict[str, Any], dataset: Any = None) -> list:
    dataset = dataset or rows.dataset(user, label_names=tfidf_artifact["labels"])
    return [rows.model(user, dataset, name=f"Member {i}", artifact_path=tfidf_artifact["path"],
                       label_names=tfidf_artifact["labels"]) for i in (1, 2)]


def test_the_api_queues_an_ensemble_of_two_trained_models(
        client: Any, api_token: str, user: Any, rows: Any,
        tfidf_artifact: dict[str, Any]) -> None:
    a, b = members(user, rows, tfidf_artifact)
    response = client.post(URL, {"member_ids": [a.pk, b.pk], "name": "Pair"},
                           content_type="application/json",
                           HTTP_AUTHORIZATION=f"Token {api_token}")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["model_type"] == "ensemble"
    assert body["name"] == "Pair"
    assert response["Location"].endswith(f"/api/models/{body['id']}/")
    job = TrainingJob.objects.get(pk=body["latest_job_id"])
    assert job.status == TrainingJob.Status.QUEUED
    assert job.config["member_paths"] == [tfidf_artifact["path"]] * 2
    model = MLModel.objects.get(pk=body["id"])
    assert model.dataset_id == a.dataset_id
    assert model.parameters["member_ids"] == [a.pk, b.pk]
    assert model.parameters["member_names"] == ["Member 1", "Member 2"]
    assert model.parameters["member_types"] == ["tfidf_logreg", "tfidf_logreg"]


def test_bad_members_are_field_errors_and_create_nothing(
        client: Any, api_token: str, user: Any, other_user: Any, rows: Any,
        tfidf_artifact: dict[str, Any]) -> None:
    a, b = members(user, rows, tfidf_artifact)
    elsewhere = members(user, rows, tfidf_artifact)[0]
    pending = rows.model(user, a.dataset, status=MLModel.Status.PENDING, name="Pending")
    nested = rows.model(user, a.dataset, model_type="ensemble", name="Nested",
                        artifact_path=tfidf_artifact["path"])
    lost = rows.model(user, a.dataset, name="Lost", artifact_path="/nonexistent/model")
    foreign = members(other_user, rows, tfidf_artifact)[0]
    cases = [
        ([a.pk], "at least 2"),
        ([a.pk, elsewhere.pk], "same dataset: the ensemble is tuned on that dataset's"),
        ([a.pk, pending.pk], "Only trained models can be combined; 'Pending' is not."),
        ([a.pk, foreign.pk], f"No model you can see has the id {foreign.pk}."),
        ([a.pk, nested.pk], "'Nested' is itself an ensemble"),
        ([a.pk, lost.pk], "The files of 'Lost' are missing"),
        (["x", b.pk], "valid integer"),
    ]
    for ids, message in cases:
        response = client.post(URL, {"member_ids": ids}, content_type="application/json",
                               HTTP_AUTHORIZATION=f"Token {api_token}")
        assert response.status_code == 400, (ids, response.content)
        errors = response.json()["member_ids"]
        assert message in str(errors), (ids, errors)
    assert not TrainingJob.objects.exists()
    assert not MLModel.objects.filter(model_type="ensemble").exclude(pk=nested.pk).exists()

    response = client.post("/api/models/", {"dataset": a.dataset_id, "model_type": "ensemble"},
                           content_type="application/json",
                           HTTP_AUTHORIZATION=f"Token {api_token}")
    assert response.status_code == 400
    assert "POST /api/models/ensemble/" in response.json()["detail"]


def test_an_ensemble_answers_that_it_cannot_be_explained(
        client: Any, api_token: str, user: Any, rows: Any, demo_split: tuple,
        tfidf_artifact: dict[str, Any], tmp_path: Path) -> None:
    train, val, _ = demo_split
    config = TrainConfig(label_names=tfidf_artifact["labels"], multi_label=True)
    fitted = []
    for model_type in ("tfidf_logreg", "tfidf_svm"):
        clf = create_classifier(model_type)
        clf.fit(train, val, config, lambda e: None, lambda: False)
        fitted.append(clf)
    EnsembleClassifier.from_members(fitted, val=val, config=config).save(str(tmp_path / "e"))
    model = rows.model(user, rows.dataset(user, label_names=tfidf_artifact["labels"]),
                       model_type="ensemble", artifact_path=str(tmp_path / "e"),
                       label_names=tfidf_artifact["labels"])
    response = client.post(f"/api/models/{model.pk}/explain/",
                           {"text": "Coronary stenting after myocardial infarction"},
                           content_type="application/json",
                           HTTP_AUTHORIZATION=f"Token {api_token}")
    assert response.status_code == 400
    assert "Explain one of its member models instead" in response.json()["detail"]
    predicted = client.post(f"/api/models/{model.pk}/predict/",
                            {"text": "Coronary stenting after myocardial infarction"},
                            content_type="application/json",
                            HTTP_AUTHORIZATION=f"Token {api_token}")
    assert predicted.status_code == 200, predicted.content
