"""Issue 50, fault 2: both reviewers say unsure, so the record goes to full text; its PDF is
attached and it is included there; then the lead resolves the title/abstract label "no".

That resolution is refused (409, naming the full-text work) and changes nothing: the record
stays at full text, its GET answers 200, PRISMA's diagram and table both count it included.
With `confirm_discard_fulltext=true` and a `reason` it goes through: the record is excluded at
title/abstract, its report and decisions are kept, marked superseded, and the reason is in the
activity log, on the resolution and in the export; PRISMA no longer counts it anywhere at
full text, in the diagram or in the per-label table.
"""

from __future__ import annotations

import json

import pytest

from projects.models import Activity
from screening import export, visibility
from screening.models import Decision, FullTextReport, Record, RecordState, Resolution, Stage
from tests.pdf_support import report_attach
from tests.screening_state_support import api_of, both_decide, dual_session
from tests.screening_support import team  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.pg(
    "row locks across the two stages of one record")]


def test_the_included_study_stays_at_full_text_unless_leaving_is_confirmed(team) -> None:  # noqa: F811
    session = dual_session(team)
    record = both_decide(team, session, ({"oncological": "unsure"}, {"oncological": "unsure"}))
    assert record.state == RecordState.SOUGHT
    rita, mona = api_of(team.reviewer), api_of(team.maintainer)
    base = f"/api/screening/{session.pk}/fulltext/{record.pk}/"
    report_attach(user=team.reviewer, record=record)
    for person in (rita, api_of(team.reviewer2)):
        assert person.post(f"{base}decide/", {"values": {"oncological": "yes"}},
                           format="json").status_code == 200
    assert Record.objects.get(pk=record.pk).state == RecordState.INCLUDED
    conflicts = f"/api/screening/{session.pk}/conflicts/"
    body = {"record": record.pk, "label": "oncological", "value": "no"}

    refused = mona.post(conflicts, body, format="json")
    assert refused.status_code == 409
    assert "full-text work" in refused.json()["detail"]
    assert "included at full text" in refused.json()["detail"]
    assert not Resolution.objects.filter(record=record).exists()
    assert rita.get(base).status_code == 200
    counts = export.prisma_counts(session)
    assert counts["studies_included"] == 1
    assert counts["per_label"]["oncological"]["included_at_full_text"] == 1

    no_reason = mona.post(conflicts, {**body, "confirm_discard_fulltext": True}, format="json")
    assert no_reason.status_code == 400
    assert "reason" in no_reason.json()["detail"]
    assert not Resolution.objects.filter(record=record).exists()

    confirmed = mona.post(conflicts, {**body, "confirm_discard_fulltext": True,
                                      "reason": "Protocol amended: adults only"},
                          format="json")
    assert confirmed.status_code == 200, confirmed.json()
    assert confirmed.json()["state"] == RecordState.EXCLUDED
    record.refresh_from_db()
    assert record.final == {"oncological": "no"}
    assert record.fulltext_final == {}
    report = FullTextReport.objects.get(record=record)
    assert report.status == FullTextReport.Status.RETRIEVED  # kept, not deleted
    assert report.superseded_at is not None
    assert report.superseded_reason == "Protocol amended: adults only"
    assert Decision.objects.filter(record=record, stage=Stage.FULL_TEXT).count() == 2
    assert Resolution.objects.get(record=record).discard_reason == (
        "Protocol amended: adults only")
    line = Activity.objects.filter(verb="screening_resolve").latest("pk")
    assert "Protocol amended: adults only" in line.summary
    assert line.detail["discard_reason"] == "Protocol amended: adults only"
    lines = [json.loads(row) for row in "".join(export.export_jsonl(
        session, sight=visibility.session_sight(user=team.maintainer, session=session)))
        .splitlines()]
    mine = next(row for row in lines if row.get("record_id") == record.pk)
    assert "Protocol amended: adults only" in json.dumps(mine)

    counts = export.prisma_counts(session)
    assert counts["studies_included"] == 0
    assert counts["reports_sought"] == 0
    assert counts["excluded_at_screening"] == 1
    assert counts["per_label"]["oncological"]["included_at_full_text"] == 0
    assert rita.get(base).status_code == 404  # no longer at full text, as PRISMA says


def test_a_label_decided_at_full_text_leaves_it_only_when_confirmed(team) -> None:  # noqa: F811
    """Two labels at full text, both decided there; resolving one "no" at title/abstract would
    take that label out of full text while the record stays for the other."""
    session = dual_session(team, labels=["oncological", "cardiovascular"])
    unsure = {"oncological": "unsure", "cardiovascular": "unsure"}
    record = both_decide(team, session, (unsure, unsure))
    report_attach(user=team.reviewer, record=record)
    base = f"/api/screening/{session.pk}/fulltext/{record.pk}/decide/"
    for person in (team.reviewer, team.reviewer2):
        assert api_of(person).post(base, {"values": {"oncological": "yes",
                                                     "cardiovascular": "yes"}},
                                   format="json").status_code == 200
    mona = api_of(team.maintainer)
    body = {"record": record.pk, "label": "cardiovascular", "value": "no"}
    url = f"/api/screening/{session.pk}/conflicts/"

    refused = mona.post(url, body, format="json")
    assert refused.status_code == 409
    assert "decided at full text for cardiovascular" in refused.json()["detail"]
    assert Record.objects.get(pk=record.pk).fulltext_final == {"oncological": "yes",
                                                               "cardiovascular": "yes"}
    confirmed = mona.post(url, {**body, "confirm_discard_fulltext": "true",
                                "reason": "Cardiovascular is out of scope"}, format="json")
    assert confirmed.status_code == 200
    record.refresh_from_db()
    assert record.state == RecordState.INCLUDED  # still included for oncological
    assert record.fulltext_final == {"oncological": "yes"}
    assert Decision.objects.filter(record=record, stage=Stage.FULL_TEXT,
                                   label="cardiovascular").count() == 2  # kept
