"""The no-progress limit of a phase follows that phase's own pace: 3x the longest gap seen
between its progress reports, within [floor, ceiling]. A phase whose healthy reports come far
apart gets room; a quick phase keeps the floor, and a gap in one phase does not loosen another."""

from __future__ import annotations

from datetime import UTC, datetime

from classification.jobs.supervisor import StallWatch


def row(phase: str, progress: int) -> dict:
    return {"phase": phase, "current_step": 0, "progress_at": progress, "total_steps": 0,
            "current_epoch": 0.0, "total_epochs": 1, "status": "running",
            "cancel_requested": False, "heartbeat_at": datetime(2025, 1, 1, tzinfo=UTC)}


def test_the_limit_grows_with_the_longest_healthy_gap_of_the_phase_only() -> None:
    watch = StallWatch(heartbeat_timeout=600, floor=20, ceiling=300, now=0.0)
    watch.observe(row("tokenizing", 1), 0.0)
    watch.observe(row("tokenizing", 2), 2.0)
    assert watch.progress_timeout() == 20  # 3 x 2 s is under the floor
    watch.observe(row("tokenizing", 3), 42.0)  # a slow but healthy 40 s between reports
    assert watch.progress_timeout() == 120
    assert watch.verdict(42.0 + 119) == ""
    assert "no progress for 121 s (limit 120 s)" in watch.verdict(42.0 + 121)
    watch.observe(row("loading_model", 4), 50.0)
    assert watch.progress_timeout() == 20  # another phase: its own pace, the floor for now
    watch.observe(row("loading_model", 5), 500.0)
    assert watch.progress_timeout() == 300  # clamped to the ceiling
