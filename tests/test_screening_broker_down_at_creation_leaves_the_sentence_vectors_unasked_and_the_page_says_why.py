"""With the broker unreachable when a session is made, the sentence vectors' fill is not sent:
the session is still made (201, never a 503), its lock is released, and once the records are
ranked by words the page says why no vectors are coming; the next refresh asks for them again."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from core.queueing import UNREACHABLE_REASON
from screening import services
from screening.models import Record, ScreeningSession
from screening.tasks import ranker_refresh
from tests.screening_support import team  # noqa: F401
from tests.test_batch_broker_down_at_creation_answers_503_and_leaves_no_orphan import (
    broker_down,  # noqa: F401
)

pytestmark = pytest.mark.django_db(transaction=True)  # the task is sent when a commit happens

NOT_SENT = f"The sentence vectors were not computed: {UNREACHABLE_REASON}"


def test_the_session_is_made_ranked_by_words_and_says_why_no_vectors(
        broker_down: None, team: Any, settings: Any) -> None:  # noqa: F811
    settings.SCREENING_RANKER = "svm-embed"
    client = APIClient()
    client.force_authenticate(team.maintainer)
    response = client.post(reverse("api:screening_sessions"), {
        "name": "Onc", "labels": ["oncological"], "dataset": team.dataset.pk}, format="json")
    assert response.status_code == 201, response.content
    session = ScreeningSession.objects.get()
    assert (session.vectors_filling_since, session.vectors_error) == (None, NOT_SENT)
    for word, value in (("breast", "yes"), ("migraine", "no")):
        record = Record.objects.filter(session=session, title__icontains=word).get()
        services.decision_record(user=team.reviewer, record=record,
                                 values={"oncological": value})
    session.refresh_from_db()
    assert session.ranker_error == f"The ranking was not refreshed: {UNREACHABLE_REASON}"
    ranker_refresh(session.pk)  # as a worker would once the broker is back; it asks again
    session.refresh_from_db()
    assert session.ranker_choice["labels"]["oncological"]["candidate"] == "svm"
    assert session.vectors_error == NOT_SENT  # asked again, and still not sent
    page = Client()
    page.force_login(team.maintainer)
    said = page.get(reverse("screening:summary_json", args=[session.pk])).json()["ranking"]
    assert said["text"].startswith("Ranking by words (linear SVM, balanced)")
    assert said["text"].endswith(f"; {NOT_SENT}")
    assert said["vectors"] == {"wanted": True, "ready": 0, "total": 12, "filling": False,
                               "error": NOT_SENT}
