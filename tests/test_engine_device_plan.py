"""The device plan on this CPU-only machine."""

from __future__ import annotations

import json

import psutil
import pytest

from classification import ml_models
from classification.engine import device
from classification.engine.device import cpu_has_fast_bf16


def test_device_plan_on_this_cpu_is_fp32_with_one_thread_per_physical_core(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CPU_THREADS", raising=False)  # the parallel suite caps its workers
    plan = ml_models.plan_device()
    assert plan.device == "cpu"
    assert plan.threads == (psutil.cpu_count(logical=False) or 1)
    if not cpu_has_fast_bf16():
        assert plan.dtype == "float32"  # bf16 would be emulated: never chosen
    assert plan.dataloader_num_workers == 0
    assert plan.reason


def test_device_plan_serialises_to_json_with_versions_and_platform() -> None:
    data = json.loads(json.dumps(ml_models.plan_device().as_dict()))
    for key in (
        "device",
        "threads",
        "dtype",
        "reason",
        "torch_version",
        "transformers_version",
        "platform",
        "chip",
    ):
        assert key in data
    assert data["torch_version"].startswith("2.")


def test_bf16_is_only_chosen_for_cpus_with_native_bf16_instructions() -> None:
    assert not cpu_has_fast_bf16({"avx2", "fma"})
    assert cpu_has_fast_bf16({"avx2", "amx_bf16"})
    assert cpu_has_fast_bf16({"avx512_bf16"})


def test_asking_for_mps_off_apple_silicon_still_plans_the_cpu() -> None:
    plan = ml_models.plan_device(use_mps=True)
    assert plan.device == "cpu"
    assert "MPS" in plan.reason


@pytest.mark.parametrize(("bf16_rate", "expected"), [(1.0, "float32"), (400.0, "bfloat16")])
def test_a_cpu_that_claims_bf16_gets_it_only_when_the_timed_matmul_is_faster(
    monkeypatch: pytest.MonkeyPatch, bf16_rate: float, expected: str
) -> None:
    monkeypatch.setattr(device, "cpu_has_fast_bf16", lambda flags=None: True)
    rates = {"float32": 60.0, "bfloat16": bf16_rate}
    monkeypatch.setattr(device, "matmul_gflops", lambda dtype, **kw: rates[dtype])
    plan = device.plan_device()
    assert plan.dtype == expected
    assert "measured matmul" in plan.reason


def test_the_matmul_timer_reports_a_positive_rate() -> None:
    assert device.matmul_gflops("float32", size=64, seconds=0.05) > 0
