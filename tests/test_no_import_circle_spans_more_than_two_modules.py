"""The house reads top to bottom: a module may lean on one neighbour, never on a ring of them."""

from __future__ import annotations

from tests.architecture_support import import_graph, strongly_connected


def test_no_import_circle_holds_more_than_two_modules() -> None:
    circles = [c for c in strongly_connected(dict(import_graph())) if len(c) > 2]
    assert circles == []


def test_batches_reach_model_operations_but_never_the_job_lifecycle() -> None:
    batches = {m: t for m, t in import_graph().items() if m.startswith("classification.batches")}
    into_jobs = {m: sorted(x for x in t if x.startswith("classification.jobs"))
                 for m, t in batches.items()}
    assert {m: t for m, t in into_jobs.items() if t} == {}


def test_no_service_module_imports_the_tasks_module() -> None:
    # Services send tasks by name through core.queueing; only the worker imports tasks.py.
    importers = sorted(m for m, t in import_graph().items()
                       if any(x.endswith(".tasks") for x in t) and not m.endswith(".tasks"))
    assert importers == []
