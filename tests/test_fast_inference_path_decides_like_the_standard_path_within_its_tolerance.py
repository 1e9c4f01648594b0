"""The int8 fast path (OpenVINO or ONNX Runtime) is built when a transformer is trained, judged
on the validation split with its own decision rules, saved in the artifact, and taken by
predict(fast=True) only when its validation macro-F1 is within the stated tolerance; otherwise,
or where it cannot run, the standard path answers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from classification.engine import fast_inference
from classification.ml_models import load_classifier

# What the fast path may change on the tiny test model: int8 weights move its probabilities by
# well under this, and a decision flips only for an article sitting on a threshold. (Measured:
# under 0.05 on a Xeon with AMX, 0.061 on an AVX2-only EPYC, whose int8 kernels differ.)
MAX_PROB_DIFF = 0.1
MIN_AGREEMENT = 0.9


@pytest.fixture(scope="module")
def saved(trained_tiny_bert: tuple, tmp_path_factory: pytest.TempPathFactory) -> Path:
    clf, _ = trained_tiny_bert
    target = tmp_path_factory.mktemp("fast") / "artifact"
    clf.save(str(target))
    return target


def edit_manifest(source: Path, target: Path, **fast_path: object) -> Path:
    import shutil

    shutil.copytree(source, target)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["fast_path"] = {**manifest["fast_path"], **fast_path}
    (target / "manifest.json").write_text(json.dumps(manifest))
    return target


def test_training_builds_and_judges_the_fast_path_on_validation(trained_tiny_bert, saved) -> None:
    clf, events = trained_tiny_bert
    verdict = clf.fast_path
    assert verdict["built"] is True, verdict
    # The first recipe batches may use: OpenVINO's where it keeps quality and speed, else ONNX
    # Runtime's (which of them wins depends on this CPU's timing).
    assert verdict["kind"] in ("openvino-int8", "onnx-int8")
    assert verdict["file"] == fast_inference.recipe_file(verdict["recipe"])
    assert verdict["used"] == (
        verdict["val_macro_f1"] >= verdict["standard_val_macro_f1"] - fast_inference.TOLERANCE
        and verdict["speedup"] >= fast_inference.MIN_SPEEDUP)
    assert 0 < verdict["max_prob_diff"] < MAX_PROB_DIFF
    assert len(verdict["thresholds"]) == len(clf.label_names)  # its own rules, tuned again
    assert any("fast inference path" in str(e.get("message", "")) for e in events)
    assert (saved / verdict["file"]).stat().st_size > 0
    assert json.loads((saved / "manifest.json").read_text())["fast_path"] == verdict


def test_fast_decisions_match_the_standard_path_within_the_tolerance(
    saved: Path, demo_split: tuple
) -> None:
    texts = demo_split[2].texts
    loaded = load_classifier(str(saved))
    standard = loaded.predict_proba(texts)
    fast = loaded.predict_proba_fast(texts)
    diff = np.abs(standard - fast).max()
    assert 0 < diff < MAX_PROB_DIFF, "the int8 graph ran, and stayed close to the standard one"
    rules = loaded.fast_path
    agreement = (loaded._choices(standard, loaded.thresholds, loaded.class_offsets)
                 == loaded._choices(fast, rules["thresholds"], rules["class_offsets"])
                 ).all(axis=1).mean()
    assert agreement >= MIN_AGREEMENT


def test_predict_fast_takes_the_fast_path_only_when_it_is_used(
    saved: Path, demo_split: tuple, tmp_path: Path
) -> None:
    texts = demo_split[2].texts[:40]
    used = load_classifier(str(edit_manifest(saved, tmp_path / "used", used=True)))
    fast_prob = used.predict_proba_fast(texts)
    fast_rows = used.predict(texts, fast=True)
    np.testing.assert_allclose(
        [[row["probabilities"][n] for n in used.label_names] for row in fast_rows], fast_prob)
    assert used.predict(texts) != fast_rows  # single articles keep the standard path

    lost = load_classifier(str(edit_manifest(saved, tmp_path / "lost", used=False)))
    assert lost.predict(texts, fast=True) == lost.predict(texts)


def test_a_model_loaded_without_its_int8_file_falls_back_to_the_standard_path(
    saved: Path, demo_split: tuple, tmp_path: Path
) -> None:
    target = edit_manifest(saved, tmp_path / "nofile", used=True)
    (target / json.loads((target / "manifest.json").read_text())["fast_path"]["file"]).unlink()
    loaded = load_classifier(str(target))
    assert loaded.fast_path["used"] is False
    assert "cannot run on this machine: its file is missing" in loaded.fast_path["reason"]
    texts = demo_split[2].texts[:10]
    assert loaded.predict(texts, fast=True) == loaded.predict(texts)


def test_the_verdict_keeps_the_fast_path_only_when_it_is_as_good_and_faster() -> None:
    def verdict(fast_f1: float, speedup: float = 2.0) -> dict:
        return fast_inference.verdict(standard_f1=0.900, fast_f1=fast_f1, agreement=0.99,
                                      max_prob_diff=0.01, speedup=speedup, seconds=1.0, rules={})

    assert verdict(0.896)["used"] is True
    assert verdict(0.910)["used"] is True
    lost = verdict(0.890)
    assert lost["used"] is False
    assert "more than 0.005 lower, so batches use the standard path" in lost["reason"]
    slow = verdict(0.900, speedup=1.05)
    assert slow["used"] is False
    assert "ran 1.05x the standard path's speed here" in slow["reason"]
    assert fast_inference.unavailable_reason("cuda") is not None
    assert fast_inference.unavailable_reason("cpu") is None
