"""POST /api/models/<pk>/predict/ says whether a calibration map is applied to its
probabilities (`calibrated`: true only when one is, false when `select` kept none or the model
was saved before calibration existed), with the thresholds that chose the labels (`threshold`:
f1 by default, or recall); a model saved before calibration refuses threshold=recall with what
to do; an unknown threshold, or recall over the inline limit, is a 400 naming the field. A batch
says whether its model's probabilities are calibrated, in the list and the detail alike.

The two calibrated/uncalibrated models are real TF-IDF models trained here on the demo slice
split in halves (100 validation rows, enough for `select` to choose): at C=0.1 logistic
regression is under-confident and `select` keeps a map (Platt or isotonic); at C=10 it
keeps none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from classification.ml_models import TextData, TrainConfig, create_classifier
from classification.mlmodels.prediction import mlmodel_calibrated
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


def halves_model(c: float, demo_textdata: TextData, folder: Path) -> dict[str, Any]:
    """A TF-IDF model at regularization C = `c`, fitted on the even rows and tuned (its
    calibration chosen by `select`, the default) on the odd ones, saved under `folder`."""
    rows = range(len(demo_textdata))
    train = demo_textdata.subset([i for i in rows if i % 2])
    val = demo_textdata.subset([i for i in rows if not i % 2])
    labels = sorted({name for row in demo_textdata.labels for name in row})
    clf = create_classifier("tfidf_logreg")
    clf.rules_folds = 0  # tuned on the odd rows alone, so `select` sees exactly those 100
    clf.fit(train, val, TrainConfig(label_names=labels, multi_label=True, regularization_c=c),
            lambda _: None, lambda: False)
    clf.save(str(folder))
    return {"path": str(folder), "labels": labels, "metrics": clf.evaluate(val),
            "kept": clf.calibration.chosen}


@pytest.fixture(scope="module")
def artifacts(demo_textdata: TextData,
              tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("calibrated")
    return {name: halves_model(c, demo_textdata, folder / name)
            for name, c in (("map", 0.1), ("none", 10.0))}


def registered(rows: Any, user: Any, artifact: dict[str, Any], name: str) -> Any:
    return rows.model(user, rows.dataset(user, label_names=artifact["labels"]), name=name,
                      artifact_path=artifact["path"], label_names=artifact["labels"],
                      metrics=artifact["metrics"])


@pytest.fixture
def calibrated_model(user: Any, rows: Any, artifacts: dict[str, dict[str, Any]]) -> Any:
    assert artifacts["map"]["kept"] in ("temperature", "platt", "isotonic")
    return registered(rows, user, artifacts["map"], "Calibrated TF-IDF")


@pytest.fixture
def uncalibrated_model(user: Any, rows: Any, artifacts: dict[str, dict[str, Any]]) -> Any:
    assert artifacts["none"]["kept"] == "none"
    assert artifacts["none"]["metrics"]["calibration"]["selection"]["rows"] == 100
    return registered(rows, user, artifacts["none"], "Uncalibrated TF-IDF")


@pytest.fixture
def old_model(user: Any, rows: Any, tfidf_artifact: dict[str, Any], tmp_path: Path) -> Any:
    """The same model as MedLitBot saved it before calibration existed (format 2)."""
    return format_2_model(user=user, rows=rows, tfidf_artifact=tfidf_artifact,
                          folder=tmp_path / "old")


def test_predictions_are_calibrated_and_say_so(client: APIClient,
                                               calibrated_model: Any) -> None:
    url = f"/api/models/{calibrated_model.pk}/predict/"
    body = client.post(url, {"texts": TEXTS}, format="json")
    assert body.status_code == 200, body.content
    assert body.json()["calibrated"] is True
    assert body.json()["threshold"] == "f1"


def test_a_model_whose_select_kept_no_map_says_its_probabilities_are_not_calibrated(
        client: APIClient, uncalibrated_model: Any) -> None:
    body = client.post(f"/api/models/{uncalibrated_model.pk}/predict/", {"texts": TEXTS},
                       format="json")
    assert body.status_code == 200, body.content
    assert body.json()["calibrated"] is False
    assert mlmodel_calibrated(ml_model=uncalibrated_model) is False


def test_threshold_recall_flags_at_least_the_f1_labels(client: APIClient,
                                                       calibrated_model: Any) -> None:
    url = f"/api/models/{calibrated_model.pk}/predict/"
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
        client: APIClient, user: Any, calibrated_model: Any, uncalibrated_model: Any,
        old_model: Any) -> None:
    made = {name: BatchJob.objects.create(owner=user, ml_model=model, filename=name,
                                          status=BatchJob.Status.COMPLETED)
            for name, model in (("new.csv", calibrated_model), ("none.csv", uncalibrated_model),
                                ("old.csv", old_model))}
    expected = {"new.csv": True, "none.csv": False, "old.csv": False}
    for name, batch in made.items():
        assert client.get(f"/api/batches/{batch.pk.hex}/").json()["calibrated"] is (
            expected[name])
    listed = client.get("/api/batches/").json()
    items = listed["results"] if isinstance(listed, dict) else listed
    assert {b["filename"]: b["calibrated"] for b in items} == expected
