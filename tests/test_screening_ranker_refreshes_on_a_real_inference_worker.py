"""Continuous active learning on a real worker: decisions recorded through the service send
``screening.tasks.ranker_refresh`` by name once every ``ranker_every`` records are final; the
inference worker (found by Celery's autodiscovery, as start_m1.sh starts it) refits the ranker,
and the session's refresh time and its records' stored scores change, each round again."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from screening import selectors, services
from screening.models import Record, ScreeningSession
from tests.batch_support import start_inference_worker
from tests.job_support import wait_for
from tests.screening_support import team_make

pytestmark = [pytest.mark.worker, pytest.mark.timeout(240)]

TASK = "screening.tasks.ranker_refresh"


def _decide(team: Any, session: ScreeningSession, answers: list[str]) -> None:
    for value in answers:
        record = selectors.record_next(user=team.reviewer, session=session)
        services.decision_record(user=team.reviewer, record=record,
                                 values={"oncological": value})


def _refreshed_after(session: ScreeningSession, since: Any) -> ScreeningSession | None:
    session.refresh_from_db()
    if session.ranker_running_since is not None or session.ranking_refreshed_at is None:
        return None
    if since is not None and session.ranking_refreshed_at <= since:
        return None
    return session


def _stored(session: ScreeningSession) -> dict[int, tuple[dict, float]]:
    return {pk: (scores, priority) for pk, scores, priority in Record.objects.filter(
        session=session, done=False).values_list("pk", "scores", "priority")}


def test_decisions_refresh_the_ranking_on_the_inference_worker(
    start_worker: Any, user: Any, media_root: Path,
) -> None:
    worker = start_inference_worker(start_worker)
    # Listed in the banner's [tasks]: screening.tasks was found by autodiscovery.
    assert f". {TASK}" in worker.log(), worker.log()
    team = team_make(user)
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="Onc",
                                      labels=["oncological"], ranker_every=4)
    cold = _stored(session)
    assert all(scores == {} for scores, _ in cold.values())  # no model: a random order

    # The fourth final record asks for a refresh (the label's first yes beside its first no
    # would ask for one even sooner); nothing here runs the ranker itself.
    _decide(team, session, ["no", "no", "no", "yes"])
    first = wait_for(lambda: _refreshed_after(session, None), 90, "the first refresh")
    assert first.ranker_error == ""
    assert first.ranked_at_count == 4
    ranked = _stored(session)
    assert len(ranked) == len(cold) - 4
    assert all(0.0 <= scores["oncological"] <= 1.0 for scores, _ in ranked.values())
    assert any(ranked[pk][1] != cold[pk][1] for pk in ranked)
    top = max(ranked, key=lambda pk: ranked[pk][1])
    assert selectors.record_next(user=team.reviewer, session=session).pk == top

    # Four more: the ranking is refitted on eight decisions and stored again.
    _decide(team, session, ["no", "no", "yes", "no"])
    second = wait_for(lambda: _refreshed_after(session, first.ranking_refreshed_at), 90,
                      "the second refresh")
    assert second.ranked_at_count == 8
    again = _stored(session)
    assert any(again[pk][0] != ranked[pk][0] for pk in again)

    log = worker.log()
    assert len(re.findall(rf"Task {re.escape(TASK)}\[[0-9a-f-]+\] succeeded in ", log)) == 2, log
