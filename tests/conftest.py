from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

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
