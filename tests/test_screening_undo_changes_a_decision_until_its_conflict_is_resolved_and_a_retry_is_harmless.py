"""Undo on the screen page re-sends a reviewer's decision for a record: the server keeps the new
value (one row per reviewer, label and stage) until a maintainer has resolved a conflict on it;
after that a change is refused with a message, while a repeat of the same value (a retried
save) still succeeds. The page's recent list and progress come from the same rows."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from screening import selectors, services
from screening.errors import ScreeningError
from screening.models import Decision, Record
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def test_undo_until_resolved_and_a_retry_is_harmless(team) -> None:  # noqa: F811
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="Undo",
                                      labels=["oncological"], reviewers_per_record=2)
    record = selectors.record_next(user=team.reviewer, session=session)
    services.decision_record(user=team.reviewer, record=record, values={"oncological": "yes"})
    # Undo: Rita changes her mind; still one row, and the count of reviewers is unchanged.
    services.decision_record(user=team.reviewer, record=record, values={"oncological": "no"})
    services.decision_record(user=team.reviewer, record=record, values={"oncological": "no"})
    mine = Decision.objects.filter(record=record, reviewer=team.reviewer)
    assert list(mine.values_list("value", flat=True)) == ["no"]
    assert Record.objects.get(pk=record.pk).reviewer_count == 1

    services.decision_record(user=team.reviewer2, record=record, values={"oncological": "yes"})
    assert not Record.objects.get(pk=record.pk).done  # a conflict
    # Before the resolution, either reviewer may still change: Remy agrees, then not again.
    services.decision_record(user=team.reviewer2, record=record, values={"oncological": "no"})
    assert Record.objects.get(pk=record.pk).final == {"oncological": "no"}
    services.decision_record(user=team.reviewer2, record=record, values={"oncological": "yes"})
    record.refresh_from_db()
    assert record.final == {}
    assert not record.done
    services.conflict_resolve(user=team.maintainer, record=record, label="oncological",
                              value="yes")
    with pytest.raises(ScreeningError, match="resolved the conflict"):
        services.decision_record(user=team.reviewer, record=record,
                                 values={"oncological": "yes"})
    # The same value again (a save retried after its answer was lost) is not a change.
    services.decision_record(user=team.reviewer, record=record, values={"oncological": "no"})
    assert list(mine.values_list("value", flat=True)) == ["no"]

    client = Client()
    client.force_login(team.reviewer)
    recent = client.get(f"/screening/{session.pk}/recent.json").json()
    assert [r["id"] for r in recent["records"]] == [record.pk]
    assert recent["records"][0]["mine"] == {"oncological": "no"}
    # While blind the page does not mark it resolved: a resolution tells that the other
    # reviewer disagreed (issue 50). The change is still refused, below.
    assert recent["records"][0]["locked"] == []
    assert recent["progress"]["mine_today"] == 1
    assert recent["progress"]["mine"] == 1
    refused = client.post(f"/screening/{session.pk}/decide.json", json.dumps(
        {"record": record.pk, "values": {"oncological": "yes"}}),
        content_type="application/json")
    assert refused.status_code == 400
    assert "resolved" in refused.json()["detail"]
    services.session_blinding_end(user=team.owner, session=session)
    recent = client.get(f"/screening/{session.pk}/recent.json").json()
    assert recent["records"][0]["locked"] == ["oncological"]


def test_progress_counts_the_reviewers_day_and_the_sessions_done(team) -> None:  # noqa: F811
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="Count",
                                      labels=["oncological"])
    total = session.records.count()
    client = Client()
    client.force_login(team.reviewer)
    for _i in range(3):
        record = selectors.record_next(user=team.reviewer, session=session)
        answer = client.post(f"/screening/{session.pk}/decide.json", json.dumps(
            {"record": record.pk, "values": {"oncological": "no"}}),
            content_type="application/json")
        assert answer.status_code == 200, answer.content
    assert answer.json()["progress"] == {"mine_today": 3, "mine": 3, "done": 3,
                                         "remaining": total - 3, "records": total}
    # Another reviewer's page counts the session's work but not hers as theirs.
    other = selectors.screen_progress(user=team.reviewer2, session=session)
    assert (other["mine_today"], other["done"]) == (0, 3)
    page = client.get(f"/screening/{session.pk}/screen/").content.decode()
    assert 'id="mine-today">3<' in page
    assert 'id="session-remaining">' + str(total - 3) in page
