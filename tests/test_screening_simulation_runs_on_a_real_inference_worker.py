"""The page's simulation on a real worker: the service sends ``screening.tasks.simulation_run``
by name once the row is committed; the inference worker (found by Celery's autodiscovery, as
start_m1.sh starts it) replays the dataset and the run completes with its curves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from screening import simulation_runs
from screening.models import SimulationRun
from tests.batch_support import start_inference_worker
from tests.job_support import wait_for
from tests.screening_support import team_make

pytestmark = [pytest.mark.worker, pytest.mark.timeout(240)]


def test_the_inference_worker_runs_the_simulation(
    start_worker: Any, user: Any, media_root: Path,
) -> None:
    worker = start_inference_worker(start_worker)
    assert f". {simulation_runs.TASK}" in worker.log(), worker.log()
    team = team_make(user)
    run = simulation_runs.simulation_run_create(
        user=team.maintainer, dataset=team.dataset, label="oncological", seeds=2, every=2,
        patience=3)

    def ended() -> SimulationRun | None:
        run.refresh_from_db()
        return run if run.state in (SimulationRun.State.COMPLETED,
                                    SimulationRun.State.FAILED) else None

    wait_for(ended, 120, "the simulation to end")
    assert run.state == SimulationRun.State.COMPLETED, run.error
    assert [c["seed"] for c in run.result["curves"]] == [0, 1]
    assert run.result["summary"]["records"] == 12
    assert f"Task {simulation_runs.TASK}[" in worker.log()
