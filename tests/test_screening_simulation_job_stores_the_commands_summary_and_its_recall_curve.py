"""The UI's simulation is a job: created through the service it is sent by name to the inference
queue once committed; the task replays the dataset with the command's own code, so its stored
summary is the command's JSON for the same options, and it keeps each seed's recall curve
(records read -> relevant found), ending at (N, relevant), with the stop on the curve."""

from __future__ import annotations

import io
import itertools
import json

import numpy as np
import pytest
import redis
from django.conf import settings
from django.core.management import call_command

from screening import simulation, simulation_runs
from screening.models import SimulationRun
from screening.tasks import simulation_run
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db

OPTIONS = {"label": "oncological", "seeds": 3, "every": 2, "patience": 3}


def _waiting_tasks(queue: str) -> list[dict]:
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    try:
        return [json.loads(raw)["headers"] for raw in client.lrange(queue, 0, -1)]
    finally:
        client.close()


def test_the_job_runs_the_commands_simulation_and_keeps_the_curves(
    team, clean_broker, django_capture_on_commit_callbacks,  # noqa: F811
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        run = simulation_runs.simulation_run_create(user=team.maintainer,
                                                    dataset=team.dataset, **OPTIONS)
    assert run.state == SimulationRun.State.QUEUED
    sent = [h for h in _waiting_tasks(settings.QUEUE_INFERENCE)
            if h["task"] == simulation_runs.TASK]
    assert [h["argsrepr"] for h in sent] == [f"({run.pk},)"]

    simulation_run(run.pk)  # the task function itself, as the inference worker runs it
    run.refresh_from_db()
    assert run.state == SimulationRun.State.COMPLETED, run.error
    assert run.started_at is not None
    assert run.finished_at is not None

    out = io.StringIO()
    call_command("simulate_screening", dataset=team.dataset.pk, stdout=out, **OPTIONS)
    summary = run.result["summary"]
    assert summary == json.loads(out.getvalue().strip().splitlines()[-1])

    total, relevant = summary["records"], summary["relevant"]
    assert run.result["random"] == [[0, 0], [total, relevant]]
    assert [c["seed"] for c in run.result["curves"]] == [0, 1, 2]
    for curve, seed_run in zip(run.result["curves"], summary["runs"], strict=True):
        points = curve["points"]
        assert points[0] == [0, 0]
        assert points[-1] == [total, relevant]
        assert all(a[0] < b[0] and a[1] <= b[1] for a, b in itertools.pairwise(points))
        assert curve["stop"] in points
        assert curve["stop"][0] == round(seed_run["screened_at_stop"] * total)
        assert curve["stop"][1] / relevant == pytest.approx(seed_run["recall_at_stop"],
                                                            abs=1e-4)

    # The message delivered again finds the run finished and changes nothing.
    assert simulation_runs.simulation_run_execute(run_id=run.pk) is None
    assert SimulationRun.objects.get(pk=run.pk).result == run.result


def test_a_long_curve_is_cut_to_300_points_keeping_the_ends_and_the_stop() -> None:
    rng = np.random.default_rng(1)
    truth = (rng.random(5000) < 0.1).astype(int)
    order = list(rng.permutation(5000))
    curve = simulation.recall_curve(order=order, truth=truth, stopped_at=1234)
    assert len(curve["points"]) <= 300
    assert curve["points"][0] == [0, 0]
    assert curve["points"][-1] == [5000, int(truth.sum())]
    assert curve["stop"] == [1234, int(truth[order[:1234]].sum())]
    assert curve["stop"] in curve["points"]


def test_a_crash_in_the_replay_fails_the_run_and_says_why(team) -> None:  # noqa: F811
    run = simulation_runs.simulation_run_create(user=team.maintainer, dataset=team.dataset,
                                                **OPTIONS)
    # The dataset's rows vanish between the request and the worker.
    type(team.dataset).objects.filter(pk=team.dataset.pk).update(rows_path="")
    simulation_run(run.pk)
    run.refresh_from_db()
    assert run.state == SimulationRun.State.FAILED
    assert "has no rows to replay" in run.error
