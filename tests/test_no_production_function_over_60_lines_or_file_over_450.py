"""Small rooms: a function a reader holds in one screen, a file a reader holds in one sitting."""

from __future__ import annotations

from tests.architecture_support import functions, modules

MAX_FUNCTION_LINES = 60
MAX_FILE_LINES = 450


def test_no_production_function_runs_over_60_lines() -> None:
    long = sorted(f"{f.module}.{f.name} ({f.length} lines)" for f in functions()
                  if f.length > MAX_FUNCTION_LINES)
    assert long == []


def test_no_production_file_runs_over_450_lines() -> None:
    long = sorted(f"{name} ({n} lines)" for name, path in modules().items()
                  if (n := len(path.read_text().splitlines())) > MAX_FILE_LINES)
    assert long == []


def test_the_measure_counts_every_app() -> None:
    packages = {name.split(".")[0] for name in modules()}
    assert {"core", "classification", "dataset_management", "api", "web", "projects"} <= packages
    assert not any(".migrations." in name for name in modules())
