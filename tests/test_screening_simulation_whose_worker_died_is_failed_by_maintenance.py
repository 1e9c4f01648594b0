"""A simulation is acked on receipt: if its worker dies mid-run, nothing would ever finish it.
Beat's maintenance fails such a run with a reason, so the page stops waiting."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from core import maintenance
from screening.models import SimulationRun
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def _run(dataset, *, state: str, started_hours_ago: float | None) -> SimulationRun:
    started = (timezone.now() - timedelta(hours=started_hours_ago)
               if started_hours_ago is not None else None)
    return SimulationRun.objects.create(dataset=dataset, label="oncological", state=state,
                                        started_at=started)


def test_maintenance_fails_a_run_left_running_for_hours_and_spares_the_rest(team) -> None:  # noqa: F811
    dead = _run(team.dataset, state=SimulationRun.State.RUNNING, started_hours_ago=7)
    busy = _run(team.dataset, state=SimulationRun.State.RUNNING, started_hours_ago=0.1)
    waiting = _run(team.dataset, state=SimulationRun.State.QUEUED, started_hours_ago=None)

    maintenance.maintenance_run()

    for run in (dead, busy, waiting):
        run.refresh_from_db()
    assert dead.state == SimulationRun.State.FAILED
    assert "the worker running it most likely stopped" in dead.error
    assert dead.finished_at is not None
    assert busy.state == SimulationRun.State.RUNNING
    assert waiting.state == SimulationRun.State.QUEUED

    maintenance.maintenance_run()  # a second pass has nothing left to do
    dead.refresh_from_db()
    assert dead.state == SimulationRun.State.FAILED
