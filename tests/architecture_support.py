"""The production code as data: its modules, the imports between them, and its functions.

Parsed with ``ast``, never imported, so a lazy import inside a function counts like any other.
Tests, scripts and migrations are not production code.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "projects", "dataset_management", "classification", "screening",
            "literature", "api", "web", "medlitbot_project")


@dataclass(frozen=True)
class Function:
    module: str
    name: str
    line: int
    length: int


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" not in path.relative_to(ROOT).parts:
                found[_module_name(path)] = path
    return found


def _tree(name: str) -> ast.Module:
    return ast.parse(modules()[name].read_text(), filename=str(modules()[name]))


def imports_in(source: str, *, module: str, is_package: bool = False) -> Iterator[str]:
    """Every dotted name `source` imports, wherever the import statement sits."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            yield target
            # ``from pkg import module`` imports the module, not just the package.
            yield from (f"{target}.{alias.name}" for alias in node.names)


@cache
def import_graph() -> dict[str, frozenset[str]]:
    """Module -> the production modules it imports, at any depth of the function bodies."""
    known = modules()
    graph: dict[str, frozenset[str]] = {}
    for name, path in known.items():
        targets = set()
        source = path.read_text()
        for target in imports_in(source, module=name, is_package=path.name == "__init__.py"):
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                targets.add(target)
        graph[name] = frozenset(targets)
    return graph


def strongly_connected(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: every set of modules that import one another in a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def functions() -> Iterator[Function]:
    for name in modules():
        for node in ast.walk(_tree(name)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                yield Function(module=name, name=node.name, line=node.lineno, length=length)
