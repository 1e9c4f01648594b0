"""The CPU dtype is timed, so a busy moment must not flip a loaded model away from how it was
trained and scored: its thresholds and metrics were measured in that dtype."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from classification.engine import device
from classification.engine.device import DevicePlan
from classification.engine.transformer import _plan_as_trained
from classification.ml_models import load_classifier


def test_a_model_trained_in_fp32_stays_fp32_where_bf16_now_times_faster() -> None:
    plan = _plan_as_trained(DevicePlan(device="cpu", dtype="bfloat16", reason="timed"),
                            {"device": "cpu", "dtype": "float32"})
    assert plan.dtype == "float32"
    assert "kept as the model was trained" in plan.reason


def test_a_model_trained_on_a_gpu_takes_the_plan_of_the_cpu_it_lands_on() -> None:
    plan = _plan_as_trained(DevicePlan(device="cpu", dtype="float32"),
                            {"device": "cuda", "dtype": "bfloat16"})
    assert plan.dtype == "float32"


def test_bf16_is_not_kept_on_a_cpu_that_would_only_emulate_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(device, "cpu_has_fast_bf16", lambda flags=None: False)
    monkeypatch.setattr("classification.engine.transformer.cpu_has_fast_bf16",
                        lambda flags=None: False)
    plan = _plan_as_trained(DevicePlan(device="cpu", dtype="float32"),
                            {"device": "cpu", "dtype": "bfloat16"})
    assert plan.dtype == "float32"


def test_a_saved_model_loads_in_its_training_dtype_while_bf16_times_faster(
    trained_tiny_bert: tuple, demo_split: tuple, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clf, _ = trained_tiny_bert
    target = tmp_path / "artifact"
    clf.save(str(target))
    trained_dtype = json.loads((target / "manifest.json").read_text())["device_plan"]["dtype"]
    # The load's own timing now favours the other dtype, as it can under load.
    other = "float32" if trained_dtype == "bfloat16" else "bfloat16"
    monkeypatch.setattr(device, "cpu_has_fast_bf16", lambda flags=None: True)
    monkeypatch.setattr("classification.engine.transformer.cpu_has_fast_bf16",
                        lambda flags=None: True)
    rates = {other: 400.0, trained_dtype: 1.0}
    monkeypatch.setattr(device, "matmul_gflops", lambda dtype, **kw: rates[dtype])
    loaded = load_classifier(str(target))
    assert loaded.device_plan.dtype == trained_dtype
    texts = demo_split[2].texts
    assert loaded.predict(texts) == clf.predict(texts)
