"""A model saved in format 2, before calibration and recall thresholds existed, loads through
artifacts.UPGRADES as uncalibrated: the identity map, so its probabilities and labels are
exactly those it gave before, its F1 thresholds unchanged. Asked for threshold=recall it is
refused with a sentence saying to retrain; a model saved now records its calibration."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from classification.engine.artifacts import FORMAT_VERSION, read_manifest
from classification.ml_models import TextData, TrainConfig, create_classifier, load_classifier

NEW_KEYS = ("calibration", "recall_target", "recall_thresholds")


@pytest.fixture(scope="module")
def saved(demo_split: tuple[TextData, TextData, TextData],
          tmp_path_factory: pytest.TempPathFactory) -> Path:
    train, val, _ = demo_split
    clf = create_classifier("tfidf_logreg")
    clf.fit(train, val, TrainConfig(), lambda e: None, lambda: False)
    path = tmp_path_factory.mktemp("tfidf") / "model"
    clf.save(str(path))
    return path


def as_format_2(saved: Path, target: Path) -> Path:
    """The artifact as MedLitBot wrote it before format 3: no calibration, no recall keys."""
    folder = Path(shutil.copytree(saved, target))
    manifest = json.loads((folder / "manifest.json").read_text())
    for key in NEW_KEYS:
        manifest.pop(key)
    manifest["format_version"] = 2
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def test_the_current_format_records_its_calibration(saved: Path) -> None:
    manifest = json.loads((saved / "manifest.json").read_text())
    assert manifest["format_version"] == FORMAT_VERSION == 3
    assert manifest["calibration"]["method"] == "select"
    assert manifest["calibration"]["selection"]["rows"] > 0
    assert manifest["recall_target"] == 0.95
    assert len(manifest["recall_thresholds"]) == len(manifest["label_names"])
    assert load_classifier(str(saved)).calibrated


def test_a_format_2_model_reads_as_uncalibrated_and_predicts_as_before(
        saved: Path, tmp_path: Path, demo_split: tuple[TextData, TextData, TextData]) -> None:
    texts = demo_split[2].texts
    folder = as_format_2(saved, tmp_path / "old")
    manifest = read_manifest(str(folder))
    assert manifest["calibration"] == {"method": "none"}
    assert manifest["recall_thresholds"] == []
    old = load_classifier(str(folder))
    assert not old.calibrated
    raw = old.head.predict_proba(old.vectorizer.transform(texts))
    assert np.array_equal(old.predict_proba(texts), raw)
    predictions = old.predict(texts)
    assert len(predictions) == len(texts)
    assert [p["probabilities"][old.label_names[0]] for p in predictions] == list(raw[:, 0])
    assert old.thresholds == json.loads((folder / "manifest.json").read_text())["thresholds"]
    assert all(p["labels"] for p in predictions)
    metrics = old.evaluate(demo_split[2])
    assert metrics["ece"] == metrics["ece_uncalibrated"]
    assert metrics["calibration"]["method"] == "none"


def test_a_format_2_model_refuses_the_recall_threshold_with_what_to_do(
        saved: Path, tmp_path: Path, demo_split: tuple[TextData, TextData, TextData]) -> None:
    old = load_classifier(str(as_format_2(saved, tmp_path / "old")))
    with pytest.raises(ValueError, match="saved before recall thresholds existed: retrain it"):
        old.predict(demo_split[2].texts[:2], threshold="recall")
