"""Skip (issue 51): a reviewer sets a record aside, on the screen page (button and key s) or
over the API; it comes back after the other records open to them, is never counted as decided
(progress, done, the stopping rule's sample), and their skipped list says so. Another
reviewer's queue is not changed by it."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from screening import selectors, services
from screening.models import Decision
from tests.priors_support import api_of, titled_session_make
from tests.screening_review_support import client_of
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def _skip(person: Any, session: Any, record: Any) -> Any:
    return api_of(person).post(reverse("api:screening_skip", args=[session.pk]),
                               {"record": record.pk}, format="json")


def test_a_skipped_record_comes_back_last_and_is_never_counted(team) -> None:  # noqa: F811
    session = titled_session_make(team)
    first = selectors.record_next(user=team.reviewer, session=session)
    answer = _skip(team.reviewer, session, first)
    assert answer.status_code == 200, answer.content
    assert answer.json()["said"] == "1 skipped, they come back at the end"
    assert [r["id"] for r in answer.json()["records"]] == [first.pk]
    # Another reviewer's queue does not move.
    assert selectors.record_next(user=team.reviewer2, session=session).pk == first.pk
    progress = selectors.screen_progress(user=team.reviewer, session=session)
    assert (progress["mine"], progress["done"]) == (0, 0)
    assert not Decision.objects.exists()
    page = client_of(team.reviewer).get(reverse("screening:screen", args=[session.pk]))
    text = page.content.decode()
    assert 'id="btn-skip"' in text
    assert "1 skipped, they come back at the end" in text
    order = []
    while (record := selectors.record_next(user=team.reviewer, session=session)) is not None:
        order.append(record.pk)
        services.decision_record(user=team.reviewer, record=record, values={"oncological": "no"})
    assert order[-1] == first.pk
    assert len(order) == 6
    assert len(set(order)) == 6
    listed = api_of(team.reviewer).get(reverse("api:screening_skip", args=[session.pk]))
    assert listed.json()["count"] == 0


def test_skipped_records_come_back_in_the_order_skipped_and_the_sample_waits(team) -> None:  # noqa: F811
    session = titled_session_make(team)
    services.sampling_start(user=team.maintainer, session=session)
    session.refresh_from_db()
    a = selectors.record_next(user=team.reviewer, session=session)
    assert _skip(team.reviewer, session, a).status_code == 200
    b = selectors.record_next(user=team.reviewer, session=session)
    assert b.pk != a.pk
    assert _skip(team.reviewer, session, b).status_code == 200
    # The sample is the prefix of the random order that is read: the skipped one holds it.
    assert selectors.stopping_table(session=session)[0]["sampled"] == 0
    rest = []
    while (record := selectors.record_next(user=team.reviewer, session=session)) is not None:
        rest.append(record.pk)
        services.decision_record(user=team.reviewer, record=record, values={"oncological": "no"})
    assert rest[-2:] == [a.pk, b.pk]
    assert selectors.stopping_table(session=session)[0]["sampled"] == 6


def test_a_skip_that_does_not_apply_is_refused_saying_why(team) -> None:  # noqa: F811
    session = titled_session_make(team)
    record = selectors.record_next(user=team.reviewer, session=session)
    services.decision_record(user=team.reviewer, record=record, values={"oncological": "no"})
    answer = _skip(team.reviewer, session, record)
    assert answer.status_code == 400
    assert "decided" in answer.json()["detail"]
    assert _skip(team.viewer, session, record).status_code == 403
    missing = api_of(team.reviewer).post(reverse("api:screening_skip", args=[session.pk]),
                                         {"record": "x"}, format="json")
    assert missing.status_code == 400
