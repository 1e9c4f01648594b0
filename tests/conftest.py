import json
import os
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

# Several pytest workers share the cores: torch's OpenMP threads beyond a worker's share wait at
# every barrier for a descheduled sibling (the in-process tiny-BERT trainings ran slower at two
# threads beside two busy workers than at one), so each worker's engine runs one thread, as the
# Celery workers the suite starts already do (tests/plugins/worker.py). Set before torch loads;
# an explicit setting wins.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 0) > 1:
    for _name in ("CPU_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_name, "1")

# Each area of the suite keeps its fixtures in a plugin module of its own.
pytest_plugins = [
    "tests.plugins.worker",
    "tests.plugins.server",
    "tests.plugins.accounts",
    "tests.plugins.engine",
    "tests.plugins.datasets",
    "tests.plugins.browser",
    "tests.plugins.jobs",
    "tests.plugins.nodes",
    "tests.plugins.cpu_report",
]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the PostgreSQL set and the serial group from tests/suite_sets.py, and keep both true:
    every listed file exists, and every `pg` marker says why its test is in the set."""
    from tests.suite_sets import POSTGRES_SET, SERIAL_SET

    listed = {**POSTGRES_SET, **SERIAL_SET}
    missing = [name for name in listed if not (TESTS / f"{name}.py").exists()]
    if missing:
        raise pytest.UsageError(f"tests/suite_sets.py names test files that are gone: {missing}")
    for item in items:
        stem = item.path.stem
        if stem in POSTGRES_SET:
            item.add_marker(pytest.mark.pg(POSTGRES_SET[stem]))
        if stem in SERIAL_SET:
            item.add_marker(pytest.mark.serial)
        if any(not mark.args for mark in item.iter_markers("pg")):
            raise pytest.UsageError(f"{item.nodeid}: pg() needs its reason, e.g. pg('row locks')")
    _deal_modules_to_workers(items)


def _deal_modules_to_workers(items: list[pytest.Item]) -> None:
    """Order the collection so each xdist worker's first share starts with heavy modules.

    xdist's worksteal scheduler gives each worker a contiguous share and lets an idle worker
    steal from the end of another's. Modules are sorted by their recorded time
    (tests/durations.json, seconds per module from a full run; a new module counts as the
    median) and dealt round-robin into one share per worker, heaviest first: every share
    begins with long tests and ends with short ones, which are the ones stolen. A module's
    tests stay together and in order, so module fixtures are built once.
    """
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 0)
    if workers < 2:
        return
    recorded = json.loads((TESTS / "durations.json").read_text())
    median = sorted(recorded.values())[len(recorded) // 2] if recorded else 1.0
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.path.stem, []).append(item)
    heaviest = sorted(modules, key=lambda m: (-recorded.get(m, median), m))
    shares: list[list[pytest.Item]] = [[] for _ in range(workers)]
    loads = [0.0] * workers
    for module in heaviest:
        lightest = loads.index(min(loads))
        shares[lightest].extend(modules[module])
        loads[lightest] += recorded.get(module, median)
    items[:] = [item for share in shares for item in share]
