"""A trained transformer downloads as a Hugging Face folder: AutoModelForSequenceClassification
and AutoTokenizer load it without MedLitBot, its config names the labels and the problem type,
and predict.py, through PyTorch or the folder's onnx/model.onnx, gives the app's labels and
probabilities."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from classification.engine import device
from classification.jobs import lifecycle
from classification.jobs.training import run_training
from classification.mlmodels.prediction import mlmodel_predict
from classification.models import MLModel, TrainingJob
from tests.export_model_support import (
    assert_same_predictions,
    export_download,
    predicted_outside,
    run_outside,
    texts_of,
)
from tests.job_support import tiny_bert_config
from tests.no_label_support import FIXTURE, LABELS


@pytest.fixture
def exported(transactional_db: None, api_token: str, import_file: Callable[..., Any],
             user: Any, settings: Any, tiny_bert_dir: Path, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> tuple[MLModel, Path]:
    """A tiny BERT trained by the training job's own code, then exported through the API.

    In fp32: where bf16 times faster the app runs the model in bf16, and an fp32 ONNX graph
    is then 1e-4 to 1e-3 away from it (the card says so)."""
    monkeypatch.setattr(device, "cpu_has_fast_bf16", lambda flags=None: False)
    monkeypatch.setattr("classification.engine.transformer.cpu_has_fast_bf16",
                        lambda flags=None: False)
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    model = MLModel.objects.create(owner=user, name="Tiny BERT", model_type="custom",
                                   dataset=import_file(FIXTURE))
    job = TrainingJob.objects.create(ml_model=model, total_epochs=2,
                                     config=tiny_bert_config(tiny_bert_dir, epochs=2))
    assert lifecycle.training_job_claim(job=job)
    assert run_training(job_id=job.pk) == 0
    job.refresh_from_db()
    assert job.status == "completed", job.reason
    model.refresh_from_db()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    return model, export_download(client=client, model_id=model.pk, target=tmp_path / "out")


def test_transformers_loads_the_folder_with_its_labels_and_problem_type(
        exported: tuple[MLModel, Path], tmp_path: Path) -> None:
    _, folder = exported
    assert (folder / "model.safetensors").is_file()
    assert not (folder / "manifest.json").exists()
    script = (
        "import json; from transformers import AutoModelForSequenceClassification, "
        f"AutoTokenizer; m = AutoModelForSequenceClassification.from_pretrained({str(folder)!r}); "
        f"t = AutoTokenizer.from_pretrained({str(folder)!r}); "
        "out = m(**t(['cardiac study'], return_tensors='pt')).logits; "
        "print(json.dumps([m.config.problem_type, m.config.id2label, list(out.shape)]))")
    problem, id2label, shape = json.loads(run_outside(["-c", script], cwd=tmp_path))
    assert problem == "multi_label_classification"
    assert id2label == {str(i): name for i, name in enumerate(LABELS)}
    assert shape == [1, len(LABELS)]


def test_predict_py_through_pytorch_and_onnx_gives_the_apps_predictions(
        exported: tuple[MLModel, Path], tmp_path: Path) -> None:
    model, folder = exported
    texts = texts_of(model.dataset)
    app = mlmodel_predict(ml_model=model, texts=texts)
    assert_same_predictions(predicted_outside(folder=folder, texts=texts, work=tmp_path), app)
    assert (folder / "onnx" / "model.onnx").is_file()
    assert_same_predictions(predicted_outside(folder=folder, texts=texts, work=tmp_path,
                                              extra=("--backend", "onnx")), app)
    assert json.loads((folder / "postprocess.json").read_text())["dtype"] == "float32"
    card = (folder / "README.md").read_text()
    assert "library_name: transformers" in card
    assert "- ONNX: onnx/model.onnx (fp32" in card
