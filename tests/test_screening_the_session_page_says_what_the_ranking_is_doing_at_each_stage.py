"""The session page, its poll and the API say what the ranking does at each stage of the first
ranking: a random order only until each label has a yes and a no; the refresh asked at the
first yes and no (not ten records on) and said while it runs; a first ranking by words that
embeds nothing, while the sentence vectors fill in the background ("40% ready"); then the
ranker judged best, named with its figures, and hidden from a blind reviewer."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from classification.engine import sentence_vectors
from screening import services, vector_fill
from screening.models import Record, ScreeningSession
from screening.tasks import ranker_refresh, session_vectors_fill
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db

WORDS = "Ranking by words (linear SVM, balanced)"


def _said(team: Any, session: ScreeningSession) -> str:  # noqa: F811
    """The state text on the page as loaded, checked against the poll's and the API's."""
    page = Client()
    page.force_login(team.maintainer)
    html = page.get(reverse("screening:detail", args=[session.pk])).content.decode()
    polled = page.get(reverse("screening:summary_json", args=[session.pk])).json()
    api = APIClient()
    api.force_authenticate(team.maintainer)
    detail = api.get(f"/api/screening/{session.pk}/").json()
    text = polled["ranking"]["text"]
    assert detail["ranking"] == polled["ranking"]
    assert f'<span id="ranking-state">{text}</span>' in html
    return text


def _decide(team: Any, session: ScreeningSession, title_word: str, value: str) -> None:  # noqa: F811
    record = Record.objects.filter(session=session, done=False,
                                   title__icontains=title_word).first()
    services.decision_record(user=team.reviewer, record=record, values={"oncological": value})


def test_each_stage_of_the_first_ranking_is_said(team, settings, tmp_path,  # noqa: F811
                                                 monkeypatch) -> None:
    settings.SCREENING_RANKER, settings.EMBEDDING_CACHE_DIR = "svm-embed", str(tmp_path)
    sentence_vectors._memory.clear()
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="x",
                                      labels=["oncological"])  # ranker_every 10
    session.refresh_from_db()
    assert session.vectors_filling_since is not None  # the fill was asked at creation
    assert _said(team, session) == "Random order until each label has a yes and a no"
    _decide(team, session, "breast", "yes")
    assert _said(team, session) == "Random order until each label has a yes and a no"
    _decide(team, session, "hypertension", "no")
    session.refresh_from_db()
    assert session.ranker_running_since is not None  # asked at the first yes and no
    assert _said(team, session) == "Refreshing the ranking…"

    ranker_refresh(session.pk)  # the task, as the inference worker runs it
    session.refresh_from_db()
    assert not any(tmp_path.rglob("*.npz")), "the first refresh computed sentence vectors"
    assert session.ranker_choice["labels"]["oncological"]["candidate"] == "svm"
    assert _said(team, session).startswith(f"{WORDS}; the other rankers are judged once")
    assert _said(team, session).endswith("; sentence vectors 0% ready")
    monkeypatch.setattr(vector_fill, "BLOCK", 5)
    session_vectors_fill(session.pk)  # one block's task; it sends the next to the queue
    assert _said(team, session).endswith("; sentence vectors 41% ready")  # 5 of 12

    session_vectors_fill(session.pk)  # the two tasks the queue would run
    session_vectors_fill(session.pk)
    assert _said(team, session).endswith("; sentence vectors ready, judged at the next refresh")
    for word, value in (("glioma", "yes"), ("lung", "yes"), ("statins", "no"),
                        ("migraine", "no")):
        _decide(team, session, word, value)
    ScreeningSession.objects.filter(pk=session.pk).update(ranker_running_since=None)
    ranker_refresh(session.pk)
    session.refresh_from_db()
    said = _said(team, session)
    chosen = session.ranker_choice["labels"]["oncological"]
    assert session.ranker_choice["vectors"] is True
    assert set(chosen["figures"]) >= {"svm", "svm-bigram", "svm-vectors", "svm-embed"}
    assert said.startswith(f"Ranking by {chosen['description']}, chosen over ")
    assert f"on 3-fold out-of-fold AP {chosen['figures'][chosen['candidate']]:.2f} vs" in said


def test_words_only_deployment_never_mentions_vectors_and_hides_the_ranking_when_blind(
        team) -> None:  # noqa: F811
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="x",
                                      labels=["oncological"], reviewers_per_record=2)
    session.refresh_from_db()
    assert session.vectors_filling_since is None  # SCREENING_RANKER svm: no vectors wanted
    ScreeningSession.objects.filter(pk=session.pk).update(ranker_choice={"labels": {
        "oncological": {"candidate": "svm", "text": WORDS}}, "vectors": False})
    assert _said(team, session) == WORDS
    blind = Client()
    blind.force_login(team.reviewer)
    polled = blind.get(reverse("screening:summary_json", args=[session.pk])).json()
    assert polled["ranking"] is None
    assert "ranking-state" not in blind.get(
        reverse("screening:detail", args=[session.pk])).content.decode()
