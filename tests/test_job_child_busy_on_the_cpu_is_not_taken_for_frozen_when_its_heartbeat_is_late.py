"""A training process that keeps using CPU is not frozen, though its heartbeat is late: a long
import holds the GIL in C code, and on a loaded machine that outlasts the heartbeat timeout. Once
it uses no CPU either (SIGSTOPped, or blocked), the watchdog says so as before."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from datetime import UTC, datetime

from classification.jobs.supervisor import CPU_ALIVE_SECONDS, StallWatch
from core.processes import cpu_seconds


def row() -> dict:
    return {
        "phase": "preparing", "current_step": 0, "progress_at": 1, "total_steps": 0,
        "current_epoch": 0, "total_epochs": 1, "status": "running", "cancel_requested": False,
        "heartbeat_at": datetime(2025, 1, 1, tzinfo=UTC),
    }


def test_cpu_time_keeps_a_silent_child_alive_until_it_stops_using_any() -> None:
    watch = StallWatch(heartbeat_timeout=3, floor=100, ceiling=200, now=0.0)
    watch.observe(row(), 0.5)
    for second in range(1, 11):  # importing: no heartbeat, a tenth of a second of CPU a second
        watch.observe_cpu(0.1 * second, float(second))
    assert watch.verdict(10.0) == ""
    # Then it freezes: its CPU time stands still.
    for second in range(11, 14):
        watch.observe_cpu(1.0, float(second))
    assert watch.verdict(13.0) == ""
    verdict = watch.verdict(13.5)
    assert verdict.startswith("stalled in preparing: no heartbeat for 13 s (limit 3 s)"), verdict
    assert "no CPU used for 4 s" in verdict


def test_cpu_below_the_threshold_is_added_up_rather_than_lost() -> None:
    watch = StallWatch(heartbeat_timeout=3, floor=100, ceiling=200, now=0.0)
    watch.observe(row(), 0.0)
    step = CPU_ALIVE_SECONDS / 2.5
    for tick in range(1, 41):  # a trickle of CPU under the threshold at every single look
        watch.observe_cpu(step * tick, tick / 4)
    assert watch.verdict(10.0) == ""


def test_an_unreadable_process_gives_no_evidence_of_life() -> None:
    watch = StallWatch(heartbeat_timeout=3, floor=100, ceiling=200, now=0.0)
    watch.observe(row(), 0.0)
    for second in range(1, 5):
        watch.observe_cpu(None, float(second))
    assert "no CPU used for 5 s" in watch.verdict(5.0)


def test_a_real_process_uses_cpu_while_it_runs_and_none_while_stopped() -> None:
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        start = cpu_seconds(busy.pid)
        time.sleep(1.0)
        running = cpu_seconds(busy.pid)
        assert start is not None
        assert running is not None
        assert running - start >= CPU_ALIVE_SECONDS
        busy.send_signal(signal.SIGSTOP)
        time.sleep(0.2)
        stopped = cpu_seconds(busy.pid)
        time.sleep(0.5)
        assert cpu_seconds(busy.pid) - stopped < CPU_ALIVE_SECONDS
    finally:
        busy.kill()
        busy.wait()
    assert cpu_seconds(busy.pid) is None
