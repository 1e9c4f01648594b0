"""evaluate prints metrics ending in one JSON line; predict writes a formula-safe CSV or answers
one --text; both read any file import accepts, without creating a Dataset."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from classification import ml_models
from classification.jobs.training import load_split
from classification.models import MLModel
from dataset_management.models import Dataset
from tests.job_support import FIXTURES


@pytest.fixture
def trained(slice_dataset, tmp_path: Path) -> MLModel:
    train = load_split(slice_dataset, "train")
    val = load_split(slice_dataset, "validation")
    clf = ml_models.create_classifier("tfidf_logreg")
    config = ml_models.TrainConfig(label_names=slice_dataset.label_names,
                                   multi_label=slice_dataset.is_multilabel)
    clf.fit(train, val, config, lambda _: None, lambda: False)
    clf.save(str(tmp_path / "model"))
    return MLModel.objects.create(
        name="T", model_type="tfidf_logreg", dataset=slice_dataset, status="trained",
        artifact_path=str(tmp_path / "model"), label_names=clf.label_names,
    )


def test_evaluate_prints_one_json_summary_line(trained, tmp_path: Path) -> None:
    datasets = Dataset.objects.count()
    out = io.StringIO()
    call_command("evaluate", str(trained.pk), str(FIXTURES / "demo_slice.csv"),
                 "--json", str(tmp_path / "m.json"), stdout=out)
    summary = json.loads(out.getvalue().strip().splitlines()[-1])
    assert summary["n"] == 200
    assert 0 <= summary["micro_f1"] <= 1
    assert "macro_f1" in summary
    full = json.loads((tmp_path / "m.json").read_text())
    assert "per_label" in full
    # calibration as measured on the evaluated file: top-label or per-pair ECE in 15 bins, and
    # the Brier score, both from the probabilities the model gives these 200 rows
    assert 0 <= full["ece"] <= 1
    assert full["calibration"]["bins"] == 15
    assert 0 <= full["brier"] <= 1
    assert full["calibration"]["curve_after"]
    assert Dataset.objects.count() == datasets


def test_predict_writes_a_formula_safe_csv_and_answers_one_text(trained, tmp_path) -> None:
    source = tmp_path / "articles.csv"
    source.write_text('title;abstract\n=HYPERLINK("x");breast cancer therapy trial\n')
    call_command("predict", str(trained.pk), str(source), "--out", str(tmp_path / "o.csv"),
                 stdout=io.StringIO())
    rows = list(csv.reader((tmp_path / "o.csv").open()))
    assert rows[0][:2] == ["text", "predicted_labels"]
    assert rows[1][0].startswith("'=")
    out = io.StringIO()
    call_command("predict", str(trained.pk), "--text", "heart failure outcomes", stdout=out)
    assert set(json.loads(out.getvalue())["probabilities"]) == set(trained.label_names)
