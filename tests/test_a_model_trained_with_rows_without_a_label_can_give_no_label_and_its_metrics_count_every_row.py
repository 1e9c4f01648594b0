"""A multi-label dataset's rows without a label teach a model "none of these": trained on them
(all-zero targets), a TF-IDF model gives no label to an article about none of its classes, its
labels to one about them, and its test metrics count every test row, those without a label
included (right only when the model gives none)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from classification import services
from dataset_management.selectors import dataset_split_examples
from tests.no_label_support import LABELS, model_trained

OFF_TOPIC = ("Hospital billing survey: staffing costs, insurance questionnaire and scheduling "
             "of the administration workforce.")
CARDIAC = "Myocardial infarction and atrial fibrillation in patients with coronary artery disease."


def test_rows_without_a_label_teach_the_model_to_give_none(
        transactional_db: None, import_file: Any, user: Any, settings: Any,
        tmp_path: Path) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    model = model_trained(import_file=import_file, user=user)
    assert model.is_multilabel
    assert model.label_names == LABELS
    test = dataset_split_examples(dataset=model.dataset, split="test")
    without = sum(1 for labels in test.labels if not labels)
    assert without > 0
    metrics = model.metrics
    assert (metrics["rows_scored"], metrics["rows_total"], metrics["n"]) == (len(test),) * 3
    predicted = services.mlmodel_predict(ml_model=model, texts=[OFF_TOPIC, CARDIAC])
    assert predicted[0]["labels"] == []
    assert predicted[1]["labels"] == ["cardiology"]


def test_a_model_trained_without_such_rows_still_gives_its_likeliest_label(
        transactional_db: None, import_file: Any, user: Any, settings: Any,
        tmp_path: Path) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    model = model_trained(import_file=import_file, user=user, no_label_rows="drop")
    assert model.dataset.row_count == 90
    predicted = services.mlmodel_predict(ml_model=model, texts=[OFF_TOPIC])
    assert predicted[0]["labels"] != []  # at least its likeliest label, as before

