"""With the broker unreachable, a session with a starting model is still made, and the answer
says so: the API's 201 and the page's redirect, never a 503 for a session that exists (a client
told 503 tries again and makes a second one). The lock is released, `ranker_error` says why,
and `starting_pending` stays set, so the next refresh scores with the model first."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from core.queueing import UNREACHABLE_REASON
from screening.models import ScreeningSession
from tests.screening_support import team, trained_model_make  # noqa: F401
from tests.test_batch_broker_down_at_creation_answers_503_and_leaves_no_orphan import (
    broker_down,  # noqa: F401
)

pytestmark = pytest.mark.django_db(transaction=True)  # the task is sent when a commit happens


def assert_made_and_says_why() -> None:
    session = ScreeningSession.objects.get()
    assert session.starting_pending is True
    assert session.ranker_running_since is None
    assert session.ranker_error == ("The starting model has not ranked the records yet: "
                                    f"{UNREACHABLE_REASON}")
    assert session.records.count() > 0


def test_the_api_answers_201_with_the_session_and_its_reason(
        broker_down: None, team: Any, tfidf_artifact: dict[str, Any]) -> None:  # noqa: F811
    model = trained_model_make(team, tfidf_artifact)
    client = APIClient()
    client.force_authenticate(team.maintainer)
    response = client.post(reverse("api:screening_sessions"), {
        "name": "Onc", "labels": ["oncological"], "dataset": team.dataset.pk,
        "starting_model": model.pk}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["ranker_error"].endswith(UNREACHABLE_REASON)
    assert_made_and_says_why()


def test_the_page_goes_to_the_session_which_says_why(
        broker_down: None, team: Any, tfidf_artifact: dict[str, Any]) -> None:  # noqa: F811
    model = trained_model_make(team, tfidf_artifact)
    client = Client()
    client.force_login(team.maintainer)
    session = client.session
    session["project_id"] = team.project.pk  # the header's switcher: the team's project
    session.save()
    response = client.post(reverse("screening:list"), {
        "name": "Onc", "labels": "oncological", "dataset": team.dataset.pk,
        "starting_model": model.pk, "order": "most_likely", "reviewers_per_record": 1,
        "ranker_every": 10, "recall_target": 0.95, "confidence": 0.95}, follow=True)
    assert response.status_code == 200
    assert_made_and_says_why()
    assert "The starting model has not ranked the records yet" in response.content.decode()
