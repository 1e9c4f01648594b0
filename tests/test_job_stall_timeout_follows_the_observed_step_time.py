"""The progress timeout is 10x the median observed step time, clamped to [floor, ceiling]; the
floor applies while loading; a silent heartbeat is reported as a frozen process."""

from __future__ import annotations

from datetime import UTC, datetime

from classification.jobs.supervisor import StallWatch


def row(phase: str, step: int, progress: int, beat: int = 0) -> dict:
    return {
        "phase": phase, "current_step": step, "progress_at": progress, "total_steps": 100,
        "current_epoch": 0.5, "total_epochs": 2, "status": "running", "cancel_requested": False,
        "heartbeat_at": datetime(2025, 1, 1, 0, 0, beat, tzinfo=UTC),
    }


def test_the_stall_limit_is_ten_median_steps_clamped_to_floor_and_ceiling() -> None:
    watch = StallWatch(heartbeat_timeout=60, floor=4, ceiling=30, now=0.0)
    watch.observe(row("loading_model", 0, 1), 1.0)
    assert watch.progress_timeout() == 4  # loading: the floor
    for i in range(1, 6):
        watch.observe(row("training", i, 1 + i, beat=i), 1.0 + 2.0 * i)
    assert watch.progress_timeout() == 20  # 10 x 2 s
    assert watch.verdict(11.0 + 19) == ""
    verdict = watch.verdict(11.0 + 21)
    assert verdict.startswith("stalled in training (epoch 0.50 of 2, step 5 of 100): no progress")
    for i in range(6, 12):
        watch.observe(row("training", i, 1 + i, beat=i), 11.0 + 10.0 * (i - 5))
    assert watch.progress_timeout() == 30  # 10 x 10 s, clamped to the ceiling


def test_a_silent_heartbeat_is_reported_as_a_frozen_process() -> None:
    watch = StallWatch(heartbeat_timeout=3, floor=100, ceiling=200, now=0.0)
    watch.observe(row("tokenizing", 0, 1), 0.5)
    assert watch.verdict(3.0) == ""
    assert "no heartbeat for 4 s" in watch.verdict(4.0)
    assert watch.verdict(4.0).startswith("stalled in tokenizing")
