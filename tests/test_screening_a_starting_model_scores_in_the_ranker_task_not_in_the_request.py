"""Creating a session with a starting model does not score in the request: the session is made
at once (records in a random order, "scoring with the starting model…" on the page, the
refresh lock taken), and the ranker task stores the model's probabilities as the first ranking.
A model that cannot score says why on the page; the session goes on in a random order."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from classification import services as classification_services
from classification.engine.types import article_text
from screening import selectors, services
from screening.models import Record, ScreeningSession
from screening.tasks import ranker_refresh
from tests.screening_support import team, trained_model_make  # noqa: F401

pytestmark = pytest.mark.django_db


def _page(team, session) -> str:  # noqa: F811
    client = Client()
    client.force_login(team.maintainer)
    return client.get(reverse("screening:detail", args=[session.pk])).content.decode()


def _start(team, model) -> ScreeningSession:  # noqa: F811
    return services.session_create(user=team.maintainer, dataset=team.dataset, name="Onc",
                                   labels=["oncological"], starting_model=model)


def test_the_request_only_asks_and_the_task_stores_the_models_ranking(
        team, tfidf_artifact) -> None:  # noqa: F811
    model = trained_model_make(team, tfidf_artifact)
    session = _start(team, model)
    session.refresh_from_db()
    assert session.starting_pending is True
    assert session.ranker_running_since is not None  # the refresh lock, for the worker
    assert session.ranking_refreshed_at is None
    assert all(s == {} for s in Record.objects.filter(session=session)
               .values_list("scores", flat=True))
    assert "Scoring with the starting model “Starting TF-IDF”…" in _page(team, session)
    assert selectors.session_summary(session=session)["starting_scoring"] is True

    ranker_refresh(session.pk)  # the task, as the inference worker runs it

    session.refresh_from_db()
    assert (session.starting_pending, session.ranker_running_since, session.ranker_error) == (
        False, None, "")
    assert session.ranking_refreshed_at is not None
    records = list(Record.objects.filter(session=session).order_by("position"))
    expected = classification_services.mlmodel_predict(
        ml_model=model, texts=[article_text(r.title, r.abstract) for r in records], fast=True)
    for record, prediction in zip(records, expected, strict=True):
        assert record.scores["oncological"] == pytest.approx(
            prediction["probabilities"]["oncological"], abs=1e-5)
    top = max(records, key=lambda r: r.scores["oncological"])
    assert selectors.record_next(user=team.reviewer, session=session) == top
    page = _page(team, session)
    assert "Scoring with the starting model" not in page
    assert "Ranking refreshed" in page


def test_a_model_that_cannot_score_says_why_and_the_session_goes_on(
        team, tfidf_artifact, tmp_path) -> None:  # noqa: F811
    model = trained_model_make(team, {**tfidf_artifact, "path": str(tmp_path / "gone")})
    session = _start(team, model)
    ranker_refresh(session.pk)
    session.refresh_from_db()
    assert session.starting_pending is False  # tried once, not at every refresh
    assert session.ranker_running_since is None
    assert session.ranker_error.startswith("The starting model could not rank the records (")
    assert "random order until the ranker learns from your decisions" in session.ranker_error
    assert "could not rank the records" in _page(team, session)
    record = selectors.record_next(user=team.reviewer, session=session)
    services.decision_record(user=team.reviewer, record=record, values={"oncological": "no"})
    assert Record.objects.get(pk=record.pk).done
