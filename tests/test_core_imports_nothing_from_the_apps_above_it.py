"""core is the floor: apps register what core runs for them, and core never reaches up."""

from __future__ import annotations

from tests.architecture_support import import_graph, imports_in, strongly_connected

APPS_ABOVE_CORE = ("classification", "dataset_management", "screening", "api", "web", "projects")


def test_no_core_module_imports_an_app_even_lazily() -> None:
    reaching_up = {
        module: sorted(t for t in targets if t.split(".")[0] in APPS_ABOVE_CORE)
        for module, targets in import_graph().items()
        if module.split(".")[0] == "core"
    }
    assert {m: t for m, t in reaching_up.items() if t} == {}


def test_the_walker_sees_a_lazy_relative_import_inside_a_function() -> None:
    source = "def f():\n    from ..jobs import lifecycle\n    import classification.tasks\n"
    found = set(imports_in(source, module="classification.batches.runner"))
    assert {"classification.jobs.lifecycle", "classification.tasks"} <= found


def test_tarjan_finds_a_three_module_circle_and_leaves_a_chain_alone() -> None:
    graph = {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}),
             "d": frozenset({"a"})}
    circles = [c for c in strongly_connected(graph) if len(c) > 1]
    assert circles == [["a", "b", "c"]]
