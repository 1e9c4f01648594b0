"""CPU_THREADS caps the torch threads a job uses on the CPU, for a machine shared with other
busy work; unset, zero or unreadable, a job uses every physical core, and never more."""

from __future__ import annotations

import pytest

from classification import ml_models
from classification.engine import device


@pytest.mark.parametrize("value", ["", "0", "many", "-3"])
def test_without_a_usable_cap_a_job_uses_every_physical_core(
        monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CPU_THREADS", value)
    plan = ml_models.plan_device()
    assert plan.threads == device.physical_cores()
    assert "threads = physical cores" in plan.reason


def test_a_cap_below_the_cores_is_the_plans_thread_count_and_its_reason_says_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CPU_THREADS", "1")
    plan = ml_models.plan_device()
    assert plan.threads == 1
    if device.physical_cores() > 1:
        assert f"1 of {device.physical_cores()} physical cores (CPU_THREADS)" in plan.reason
    assert device.plan_cpu_only("a baseline").threads == 1


def test_a_cap_above_the_cores_gives_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CPU_THREADS", "4096")
    assert ml_models.plan_device().threads == device.physical_cores()
