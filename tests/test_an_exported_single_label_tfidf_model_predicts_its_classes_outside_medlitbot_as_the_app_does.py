"""A single-label TF-IDF model's export reproduces its softmax calibration and class decision
outside MedLitBot: predict.py gives the app's one class and probabilities per text."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rest_framework.test import APIClient

from classification.jobs import lifecycle
from classification.jobs.training import run_training
from classification.mlmodels.prediction import mlmodel_predict
from classification.models import MLModel, TrainingJob
from tests.export_model_support import (
    assert_same_predictions,
    export_download,
    predicted_outside,
    texts_of,
)

DEMO_SLICE = Path(__file__).parent / "fixtures" / "demo_slice.csv"


def single_label_csv(target: Path) -> Path:
    """The demo slice with each article's first group as its one class."""
    with DEMO_SLICE.open(encoding="utf-8-sig") as fh:
        rows = list(csv.DictReader(fh, delimiter=";"))
    with target.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["title", "abstract", "label"])
        writer.writerows([r["title"], r["abstract"], r["group"].split("|")[0]] for r in rows)
    return target


def test_the_export_gives_the_apps_class_and_probabilities(
        transactional_db: None, api_token: str, import_file: Callable[..., Any], user: Any,
        settings: Any, tmp_path: Path) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    dataset = import_file(single_label_csv(tmp_path / "single.csv"))
    assert not dataset.is_multilabel
    model = MLModel.objects.create(owner=user, name="One class", model_type="tfidf_logreg",
                                   dataset=dataset)
    job = TrainingJob.objects.create(ml_model=model, config={}, total_epochs=1)
    assert lifecycle.training_job_claim(job=job)
    assert run_training(job_id=job.pk) == 0
    model.refresh_from_db()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    folder = export_download(client=client, model_id=model.pk, target=tmp_path / "out")
    rules = json.loads((folder / "postprocess.json").read_text())
    assert rules["multi_label"] is False
    texts = texts_of(dataset)
    app = mlmodel_predict(ml_model=model, texts=texts)
    outside = predicted_outside(folder=folder, texts=texts, work=tmp_path)
    assert_same_predictions(outside, app)
    assert all(len(row["labels"]) == 1 for row in outside)
    card = (folder / "README.md").read_text()
    assert "left out of training and of every metric" in card
    assert "| accuracy |" in card
