"""The simulation page: a maintainer starts one from the form; while it waits the page reloads
itself; once run it shows the per-seed table with means and minimum recall, and the recall curve
as server-drawn inline SVG (no script: the CSP allows none inline) with each seed's stopping
point and the random-order line. A viewer sees it; a viewer cannot start one."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from projects.middleware import SESSION_KEY
from screening import simulation_runs
from screening.models import SimulationRun
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db

FORM = {"label": "oncological", "recall_target": 0.95, "confidence": 0.95, "seeds": 2,
        "every": 2, "patience": 3}


def _client(person, project) -> Client:
    client = Client()
    client.force_login(person)
    store = client.session
    store[SESSION_KEY] = project.pk
    store.save()
    return client


def test_the_form_starts_a_run_and_the_page_draws_its_curve(team) -> None:  # noqa: F811
    boss = _client(team.maintainer, team.project)
    created = boss.post(reverse("screening:simulations"),
                        data={**FORM, "dataset": team.dataset.pk})
    run = SimulationRun.objects.get()
    assert created.status_code == 302
    assert created.url == reverse("screening:simulation", args=[run.pk])

    waiting = boss.get(created.url).content.decode()
    assert 'http-equiv="refresh"' in waiting
    assert "<svg" not in waiting

    simulation_runs.simulation_run_execute(run_id=run.pk)
    page = _client(team.viewer, team.project).get(created.url)
    assert page.status_code == 200
    html = page.content.decode()
    assert 'http-equiv="refresh"' not in html
    assert '<svg id="recall-curve"' in html
    assert html.count('class="recall-curve"') == 2
    assert html.count('class="stop-point"') == 2
    assert 'id="random-line"' in html
    assert "<script" not in html.split('<svg id="recall-curve"')[1].split("</svg>")[0]
    run.refresh_from_db()
    summary = run.result["summary"]
    assert f'id="min-recall">min {summary["min_recall_at_stop"]}<' in html
    assert f'id="mean-wss">{summary["mean_wss_at_95"]}<' in html
    listing = boss.get(reverse("screening:simulations")).content.decode()
    assert reverse("screening:simulation", args=[run.pk]) in listing


def test_a_viewer_cannot_start_a_simulation(team) -> None:  # noqa: F811
    viewer = _client(team.viewer, team.project)
    assert 'id="simulation-create"' not in viewer.get(
        reverse("screening:simulations")).content.decode()
    answer = viewer.post(reverse("screening:simulations"),
                         data={**FORM, "dataset": team.dataset.pk})
    assert answer.status_code == 403
    assert not SimulationRun.objects.exists()
