"""What the apps above core hand it to run: maintenance steps, metrics families, task wording.

core is the floor and never imports an app. Each app registers its own pieces in its
AppConfig.ready() (every process that sets Django up runs it: web, workers, beat, commands), and
core runs whatever is registered: core.maintenance the steps, core.metrics the families,
core.heartbeat the words a worker's row uses for the job a task works on.

Registering again under the same name replaces the entry, so a ready() that runs twice (some
test runners) never runs a step twice. `order` keeps the log line and the /metrics text in a
stable order whatever the order of INSTALLED_APPS: lower first, then by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prometheus_client.core import Metric

# A step returns what it did in a few words, or "" when it had nothing to do.
MaintenanceStep = Callable[[], str]
# A collector reads its families at scrape time; raising skips only its own families.
MetricsCollector = Callable[[], "list[Metric]"]
# From a task's positional and keyword arguments to "training job 12".
TaskDescriber = Callable[[list[Any], dict[str, Any]], str]


@dataclass(frozen=True)
class Registered:
    name: str
    func: Callable[..., Any]
    order: int


_maintenance_steps: dict[str, Registered] = {}
_metrics_collectors: dict[str, Registered] = {}
_task_describers: dict[str, TaskDescriber] = {}


def _in_order(entries: dict[str, Registered]) -> list[Registered]:
    return sorted(entries.values(), key=lambda entry: (entry.order, entry.name))


def maintenance_step_register(*, name: str, func: MaintenanceStep, order: int = 100) -> None:
    """Have beat's maintenance run `func`; a step that raises is logged and the others run."""
    _maintenance_steps[name] = Registered(name=name, func=func, order=order)


def maintenance_steps() -> list[Registered]:
    return _in_order(_maintenance_steps)


def metrics_collector_register(*, name: str, func: MetricsCollector, order: int = 100) -> None:
    """Serve `func`'s families on /metrics; `name` labels medlitbot_metrics_collect_errors."""
    _metrics_collectors[name] = Registered(name=name, func=func, order=order)


def metrics_collectors() -> list[Registered]:
    return _in_order(_metrics_collectors)


def task_describer_register(*, task_name: str, func: TaskDescriber) -> None:
    """How a worker's heartbeat row names the job task `task_name` (its full name) works on."""
    _task_describers[task_name] = func


def task_describer(*, task_name: str) -> TaskDescriber | None:
    return _task_describers.get(task_name)
