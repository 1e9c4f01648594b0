"""A trained TF-IDF model downloads as a folder that loads without MedLitBot: its skops
Pipeline, postprocess.json and predict.py give the app's labels and probabilities, and its
README.md model card names its data, labels, split and test metrics with their intervals."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from classification.mlmodels.prediction import mlmodel_predict
from tests.export_model_support import (
    assert_same_predictions,
    export_download,
    predicted_outside,
    run_outside,
    texts_of,
)
from tests.no_label_support import LABELS, model_trained


@pytest.fixture
def api(api_token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    return client


@pytest.fixture
def exported(transactional_db: None, api: APIClient, import_file: Callable[..., Any],
             user: Any, settings: Any, tmp_path: Path) -> tuple[Any, Path]:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    model = model_trained(import_file=import_file, user=user)
    return model, export_download(client=api, model_id=model.pk, target=tmp_path / "unzipped")


def test_predict_py_outside_medlitbot_gives_the_apps_labels_and_probabilities(
        exported: tuple[Any, Path], tmp_path: Path) -> None:
    model, folder = exported
    texts = texts_of(model.dataset)
    assert len(texts) == 20
    app = mlmodel_predict(ml_model=model, texts=texts)
    outside = predicted_outside(folder=folder, texts=texts, work=tmp_path)
    assert_same_predictions(outside, app)
    # The model may give no label (trained with rows without one), and the export does too.
    assert any(not row["labels"] for row in app) == any(not row["labels"] for row in outside)
    recall = predicted_outside(folder=folder, texts=texts, work=tmp_path,
                               extra=("--threshold", "recall"))
    assert_same_predictions(recall, mlmodel_predict(ml_model=model, texts=texts,
                                                    threshold="recall"))


def test_the_pipeline_loads_with_skops_and_the_trusted_types_the_card_lists(
        exported: tuple[Any, Path], tmp_path: Path) -> None:
    _, folder = exported
    rules = json.loads((folder / "postprocess.json").read_text())
    card = (folder / "README.md").read_text()
    assert f"trusted={rules['skops_trusted_types']!r}" in card
    script = ("import json, sys, skops.io; "
              f"parts = skops.io.load({str(folder / 'model.skops')!r}, "
              f"trusted={rules['skops_trusted_types']!r}); "
              f"sys.path.insert(0, {str(folder)!r}); import predict; "
              "p = predict.pipeline_load(); "
              "print(json.dumps([sorted(parts), type(p).__name__, "
              "p.predict_proba(['cardiac study']).shape[1]]))")
    assert json.loads(run_outside(["-c", script], cwd=tmp_path)) == [
        ["head", "vectorizer", "vectorizer__terms"], "Pipeline", len(LABELS)]


def test_the_model_card_names_labels_split_sizes_and_metrics_with_intervals(
        exported: tuple[Any, Path]) -> None:
    model, folder = exported
    card = (folder / "README.md").read_text()
    assert card.startswith("---\nlicense: other\n")
    assert "pipeline_tag: text-classification" in card
    for label in LABELS:
        assert f"| {label} |" in card
    sizes = model.dataset.split_sizes
    assert (f"train {sizes['train']}, validation {sizes['validation']}, test {sizes['test']} "
            f"rows (seed {model.dataset.split_seed})") in card
    assert "kept as examples of none of the labels" in card
    assert "95% intervals: percentiles of 1000 bootstrap resamples" in card
    micro = model.metrics["micro_f1"]
    row = next(line for line in card.splitlines() if line.startswith("| micro_f1 |"))
    value, interval = row.split("|")[2:4]
    low, high = (float(v) for v in interval.split(" to "))
    assert float(value) == pytest.approx(micro, abs=5e-5)
    assert low <= micro <= high
    assert "not a clinical decision tool" in card
    assert "Intended use and limits" in card


def test_without_its_dataset_the_card_says_intervals_are_unavailable_and_why(
        transactional_db: None, api: APIClient, import_file: Callable[..., Any], user: Any,
        settings: Any, tmp_path: Path) -> None:
    from dataset_management.services import dataset_delete

    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    model = model_trained(import_file=import_file, user=user)
    dataset_delete(dataset=model.dataset, user=user)
    folder = export_download(client=api, model_id=model.pk, target=tmp_path / "unzipped")
    card = (folder / "README.md").read_text()
    assert ("Intervals unavailable: the dataset it was trained on was deleted, so its test rows "
            "cannot be scored again.") in card
    assert f"| micro_f1 | {model.metrics['micro_f1']:.4f} |" in card
    assert "The dataset it was trained on has since been deleted." in card
