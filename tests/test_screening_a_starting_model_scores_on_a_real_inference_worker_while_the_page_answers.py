"""A session started on the page with a starting model is answered at once, before any worker
has scored it: the page says "scoring with the starting model…" and a reviewer can already read
records (a random order). The inference worker, started only afterwards, runs
``screening.tasks.ranker_refresh`` and the model's ranking arrives: the page then says when the
ranking was refreshed, and the next record is the model's most likely one."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from projects.middleware import SESSION_KEY
from screening import selectors
from screening.models import Record, ScreeningSession
from tests.batch_support import start_inference_worker
from tests.job_support import wait_for
from tests.screening_support import team_make, trained_model_make

pytestmark = [pytest.mark.worker, pytest.mark.timeout(240)]

TASK = "screening.tasks.ranker_refresh"


def _client(person: Any, project: Any) -> Client:
    client = Client()
    client.force_login(person)
    store = client.session
    store[SESSION_KEY] = project.pk
    store.save()
    return client


def _scored(session: ScreeningSession) -> ScreeningSession | None:
    session.refresh_from_db()
    return None if session.starting_pending or session.ranker_running_since else session


def test_the_page_answers_first_and_the_worker_brings_the_models_ranking(
    start_worker: Any, user: Any, media_root: Path, tfidf_artifact: dict[str, Any],
) -> None:
    team = team_make(user)
    model = trained_model_make(team, tfidf_artifact)
    boss = _client(team.maintainer, team.project)
    began = time.monotonic()
    created = boss.post(reverse("screening:list"), data={
        "name": "Onc", "dataset": team.dataset.pk, "labels": "oncological",
        "starting_model": model.pk, "order": "most_likely", "reviewers_per_record": 1,
        "ranker_every": 10, "recall_target": 0.95, "confidence": 0.95})
    answered_in = time.monotonic() - began
    assert created.status_code == 302, created.content
    session = ScreeningSession.objects.get()
    # No worker runs yet: whatever the page shows now, the request did without scoring.
    page = boss.get(created.url).content.decode()
    assert "Scoring with the starting model" in page
    assert boss.get(reverse("screening:summary_json", args=[session.pk])).json()[
        "starting_scoring"] is True
    assert all(s == {} for s in Record.objects.filter(session=session)
               .values_list("scores", flat=True))
    reader = _client(team.reviewer, team.project)
    first = reader.get(reverse("screening:next_json", args=[session.pk])).json()["record"]
    assert first is not None  # a reviewer is not kept waiting for the model

    worker = start_inference_worker(start_worker)
    done = wait_for(lambda: _scored(session), 120, "the starting model's ranking")
    assert done.ranker_error == ""
    assert done.ranking_refreshed_at is not None
    scores = dict(Record.objects.filter(session=session).values_list("pk", "scores"))
    assert all(0.0 <= s["oncological"] <= 1.0 for s in scores.values())
    top = max(scores, key=lambda pk: scores[pk]["oncological"])
    assert selectors.record_next(user=team.reviewer, session=session).pk == top
    page = boss.get(created.url).content.decode()
    assert "Scoring with the starting model" not in page
    assert "Ranking refreshed" in page
    log = worker.log()
    assert len(re.findall(rf"Task {re.escape(TASK)}\[[0-9a-f-]+\] succeeded in ", log)) == 1, log
    print(f"\nthe page answered the creation in {answered_in * 1000:.0f} ms")
