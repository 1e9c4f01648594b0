"""The fast path's first recipe, static int8 in OpenVINO: calibrated on training texts, its
graph stays close to the standard path, it is saved in the artifact with its weights file
(and nothing of another recipe), loaded back and run by OpenVINO with the same answers; where
OpenVINO is missing a model that uses it falls back to the standard path and says why."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from classification.engine import fast_inference, openvino_int8
from classification.ml_models import load_classifier

MAX_PROB_DIFF = 0.05  # as for ONNX Runtime's recipes on the tiny model


@pytest.fixture(scope="module")
def openvino_model(trained_tiny_bert: tuple, demo_split: tuple,
                   tmp_path_factory: pytest.TempPathFactory):
    """The trained tiny BERT with its fast path switched to the OpenVINO recipe, used."""
    trained, _ = trained_tiny_bert
    clf = copy.copy(trained)  # the session's model keeps its own fast path
    train, _, _ = demo_split
    target = tmp_path_factory.mktemp("ov") / openvino_int8.RECIPE / openvino_int8.FILE
    fast_inference.export_int8(
        model=clf.model, tokenizer=clf.tokenizer, target=target, recipe=openvino_int8.RECIPE,
        calibration_texts=openvino_int8.calibration_sample(train.texts),
        max_length=clf.max_length)
    clf._fast_file, clf._onnx = target, None
    clf.fast_path = {**trained.fast_path, "used": True, "recipe": openvino_int8.RECIPE,
                     "kind": openvino_int8.KIND, "file": openvino_int8.FILE}
    return clf


def test_the_static_int8_graph_runs_in_openvino_close_to_the_standard_path(
        openvino_model, demo_split: tuple) -> None:
    texts = demo_split[2].texts
    fast = openvino_model.predict_proba_fast(texts)
    assert isinstance(openvino_model._onnx, openvino_int8.OpenVinoLogits)
    diff = np.abs(fast - openvino_model.predict_proba(texts)).max()
    assert 0 < diff < MAX_PROB_DIFF, "int8 ran, and stayed close to the standard path"


def test_it_is_saved_with_its_weights_and_loaded_back_with_the_same_answers(
        openvino_model, demo_split: tuple, tmp_path: Path) -> None:
    texts = demo_split[2].texts[:30]
    openvino_model.save(str(tmp_path / "artifact"))
    fast = tmp_path / "artifact" / "fast"
    assert sorted(p.name for p in fast.iterdir()) == ["model.int8.bin", "model.int8.xml"]
    manifest = json.loads((tmp_path / "artifact" / "manifest.json").read_text())
    assert manifest["fast_path"]["file"] == openvino_int8.FILE
    loaded = load_classifier(str(tmp_path / "artifact"))
    assert loaded.fast_path["used"] is True
    np.testing.assert_allclose(loaded.predict_proba_fast(texts),
                               openvino_model.predict_proba_fast(texts), atol=1e-6)
    assert loaded.predict(texts, fast=True) != loaded.predict(texts)  # batches take it


def test_without_openvino_a_model_that_uses_it_answers_on_the_standard_path(
        openvino_model, demo_split: tuple, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    openvino_model.save(str(tmp_path / "artifact"))
    monkeypatch.setitem(sys.modules, "openvino", None)  # import openvino raises ImportError
    loaded = load_classifier(str(tmp_path / "artifact"))
    assert loaded.fast_path["used"] is False
    assert "OpenVINO is not installed" in loaded.fast_path["reason"]
    texts = demo_split[2].texts[:10]
    assert loaded.predict(texts, fast=True) == loaded.predict(texts)


def test_calibration_texts_are_spread_over_the_training_texts() -> None:
    texts = [f"text {i}" for i in range(1000)]
    sample = openvino_int8.calibration_sample(texts)
    assert len(sample) == openvino_int8.CALIBRATION_TEXTS
    assert (sample[0], sample[-1]) == ("text 0", "text 765")
    assert openvino_int8.calibration_sample(texts[:10]) == texts[:10]
