"""Under CUDA_VISIBLE_DEVICES a worker sees its GPU as cuda:0: the device plan records which
physical GPU that is, trains on torch's current device rather than a hard-coded 0, and says so
in its reason. This machine has no GPU, so torch.cuda's answers are given here; the mapping of
visible indices to physical GPUs is exercised directly. On the CPU the plan is unchanged."""

from __future__ import annotations

import json

import pytest
import torch

from classification.engine import device


@pytest.mark.parametrize(("visible", "index", "physical"), [
    ("2", 0, "2"), ("3,1", 1, "1"), (" 5 , 7 ", 0, "5"), (None, 1, "1"),
    ("GPU-8f1c", 0, "GPU-8f1c"),
])
def test_a_visible_index_maps_to_the_gpu_cuda_visible_devices_names(
    visible: str | None, index: int, physical: str
) -> None:
    assert device.physical_gpu(index, visible) == physical


def test_the_cuda_plan_names_the_given_gpu_and_uses_the_current_device(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    names = {0: "NVIDIA H100 80GB HBM3"}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index: names[index])
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: True)

    plan = device.plan_device()

    data = json.loads(json.dumps(plan.as_dict()))
    assert data["device"] == "cuda"
    assert (data["cuda_visible_devices"], data["physical_gpus"]) == ("3", ["3"])
    assert (data["device_index"], data["physical_gpu"]) == (0, "3")
    assert data["chip"] == "NVIDIA H100 80GB HBM3"
    assert "physical GPU 3 (CUDA_VISIBLE_DEVICES=3) as cuda:0" in data["reason"]
    assert device.DevicePlan.from_dict(data) == plan


def test_the_cpu_plan_only_records_what_the_process_was_given(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    plan = device.plan_device()
    assert plan.device == "cpu"
    assert (plan.cuda_visible_devices, plan.physical_gpus) == ("", [])
    assert (plan.device_index, plan.physical_gpu) == (None, "")
