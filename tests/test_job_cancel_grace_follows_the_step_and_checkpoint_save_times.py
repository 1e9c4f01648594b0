"""A cancelled child gets twice (one step + one checkpoint save) before it is killed, never less
than CANCEL_GRACE_SECONDS; the save time is the one measured, or estimated from the checkpoint's
size until a save has been timed."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from classification.jobs.supervisor import (
    ASSUMED_SAVE_BYTES_PER_SECOND,
    StallWatch,
    checkpoint_save_seconds,
)


def row(phase: str, step: int) -> dict:
    return {
        "phase": phase, "current_step": step, "progress_at": step, "total_steps": 300,
        "current_epoch": 0.5, "total_epochs": 3, "status": "running", "cancel_requested": True,
        "heartbeat_at": datetime(2025, 1, 1, tzinfo=UTC),
    }


def stepping(seconds_per_step: float, phase: str = "training") -> StallWatch:
    watch = StallWatch(heartbeat_timeout=60, floor=120, ceiling=1800, now=0.0)
    for step in range(1, 8):
        watch.observe(row("training", step), step * seconds_per_step)
    watch.observe(row(phase, 7), 8 * seconds_per_step)
    return watch


def test_the_grace_is_the_setting_when_steps_and_saves_are_quick() -> None:
    assert stepping(0.3).cancel_grace(floor=30, save_seconds=0.5) == 30


def test_slow_steps_and_a_slow_save_stretch_the_grace_past_the_setting() -> None:
    # A 2-core machine: BERT-base steps of 12 s and a 1.3 GB checkpoint written in 20 s.
    grace = stepping(12.0).cancel_grace(floor=30, save_seconds=20.0)
    assert grace == pytest.approx(2 * (12.0 + 20.0), abs=2.0)
    assert grace > 30


def test_the_final_evaluation_which_cannot_stop_midway_adds_its_own_time() -> None:
    training = stepping(2.0).cancel_grace(floor=1, save_seconds=1.0)
    evaluating = stepping(2.0, phase="evaluating").cancel_grace(floor=1, save_seconds=1.0)
    assert evaluating == pytest.approx(training + 2.0 * 300 / 3)


def test_the_save_time_is_the_slowest_recent_measured_save_or_else_the_size_estimate() -> None:
    assert checkpoint_save_seconds([]) is None
    assert checkpoint_save_seconds([{"kind": "loss", "step": 5, "loss": 0.3}]) is None
    size_only = [{"kind": "checkpoint", "step": 0, "bytes": 1_300_000_000}]
    assert checkpoint_save_seconds(size_only) == 1_300_000_000 / ASSUMED_SAVE_BYTES_PER_SECOND
    measured = [
        *size_only,
        {"kind": "checkpoint", "step": 100, "seconds": 9.0, "bytes": 1_300_000_000},
        {"kind": "loss", "step": 105, "loss": 0.2},
        {"kind": "checkpoint", "step": 200, "seconds": 14.0, "bytes": 1_300_000_000},
    ]
    assert checkpoint_save_seconds(measured) == 14.0
