"""Continuous active learning: the ranker task refits on the final decisions and stores scores;
only one refresh holds the lock; a crash keeps the last ranking and says why."""

from __future__ import annotations

import pytest

from screening import ranking, selectors, services
from screening.models import Record
from screening.tasks import ranker_refresh
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db

CANCER_WORDS = ("cancer", "tumour", "glioblastoma", "glioma")
FIRST_READ = ("Statins after myocardial infarction", "Breast cancer screening",
              "Hypertension in the elderly", "Lung cancer immunotherapy")


def _decide_by_title(team, session, count: int) -> None:  # noqa: F811
    for _ in range(count):
        record = selectors.record_next(user=team.reviewer, session=session)
        relevant = any(w in (record.title + record.abstract).lower() for w in CANCER_WORDS)
        services.decision_record(user=team.reviewer, record=record,
                                 values={"oncological": "yes" if relevant else "no"})


def test_the_ranker_task_puts_the_likely_records_first(team, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setattr(ranking, "CHUNK", 3)  # the ranking is written in several transactions
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="x",
                                      labels=["oncological"], ranker_every=4)
    # The same four records read first whatever the session's id (which seeds the random
    # start order): on 12 short texts, four decisions drawn at random leave the ranker ties.
    for rank, title in enumerate(FIRST_READ):
        Record.objects.filter(session=session, title=title).update(priority=10.0 - rank)
    _decide_by_title(team, session, 4)
    while not {"yes", "no"} <= {r.final.get("oncological") for r in
                                Record.objects.filter(session=session, done=True)}:
        _decide_by_title(team, session, 1)
    session.refresh_from_db()
    session.ranker_running_since = None  # the request's lock, as the worker would find it
    session.save(update_fields=["ranker_running_since"])
    ranker_refresh(session.pk)  # the task function itself, run here
    session.refresh_from_db()
    assert session.ranking_refreshed_at is not None
    assert session.ranker_error == ""
    assert session.ranker_running_since is None
    undone = list(Record.objects.filter(session=session, done=False).order_by("-priority"))
    # Scores come back as JSON objects of floats (on PostgreSQL too: written by executemany),
    # and the priority stored beside them is the score, most likely first.
    assert all(isinstance(r.scores, dict) for r in undone)
    assert all(0.0 <= r.scores["oncological"] <= 1.0 for r in undone)
    assert [r.priority for r in undone] == [r.scores["oncological"] for r in undone]
    top = undone[0]
    assert any(w in (top.title + top.abstract).lower() for w in ("cancer", "tumour", "gliobl",
                                                                   "mammography", "temozolomide",
                                                                   "checkpoint", "fibre"))
    assert selectors.record_next(user=team.reviewer, session=session) == top


def test_only_one_refresh_holds_the_lock(team) -> None:  # noqa: F811
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="x",
                                      labels=["oncological"])
    assert ranking.ranker_lock_take(session_id=session.pk) is True
    assert ranking.ranker_lock_take(session_id=session.pk) is False


def test_a_crashing_ranker_keeps_the_last_ranking_and_says_why(team, settings) -> None:  # noqa: F811
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="x",
                                      labels=["oncological"])
    before = dict(Record.objects.filter(session=session).values_list("pk", "priority"))
    settings.MEDLITBOT_FAULT_INJECTION = "raise_in_ranker"
    ranker_refresh(session.pk)
    session.refresh_from_db()
    assert "ranker failed" in session.ranker_error
    assert "raise_in_ranker" in session.ranker_error
    assert session.ranker_running_since is None
    assert dict(Record.objects.filter(session=session).values_list("pk", "priority")) == before
    assert selectors.session_summary(session=session)["ranker_error"] == session.ranker_error
    assert selectors.record_next(user=team.reviewer, session=session) is not None
