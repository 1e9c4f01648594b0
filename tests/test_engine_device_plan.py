"""The device plan on this CPU-only machine."""

from __future__ import annotations

import json

import psutil

from classification import ml_models
from classification.engine.device import cpu_has_fast_bf16


def test_device_plan_on_this_cpu_is_fp32_with_one_thread_per_physical_core() -> None:
    plan = ml_models.plan_device()
    assert plan.device == "cpu"
    assert plan.threads == (psutil.cpu_count(logical=False) or 1)
    assert plan.dtype == ("bfloat16" if cpu_has_fast_bf16() else "float32")
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
