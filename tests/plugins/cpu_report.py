"""Where the suite's CPU goes: with TEST_CPU_REPORT=DIR, each pytest process writes one JSON file
there with the CPU seconds (user + system, its own and its reaped children's: the Celery
workers, training processes, servers and browsers a test starts) and the wall seconds of each
test module. On two cores the parallel phase is CPU-bound, so a module's CPU seconds, not its
wall time, is what it costs the run; `scripts/suite_cpu.py DIR` sums the files.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

_totals: dict[str, dict[str, float]] = {}


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    if not os.environ.get("TEST_CPU_REPORT"):
        yield
        return
    cpu, wall = _cpu_seconds(), time.monotonic()
    yield
    row = _totals.setdefault(item.path.stem, {"cpu": 0.0, "wall": 0.0, "tests": 0})
    row["cpu"] += _cpu_seconds() - cpu
    row["wall"] += time.monotonic() - wall
    row["tests"] += 1
    _write(Path(os.environ["TEST_CPU_REPORT"]))


def _write(folder: Path) -> None:
    """After every test, so a run cut short by a timeout still leaves its figures."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "main")
    out = folder / f"cpu-{name}-{os.getpid()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(_totals, indent=1, sort_keys=True))
    os.replace(tmp, out)
