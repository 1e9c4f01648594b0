"""Issue 50, point 4: every text-taking route caps its input. A decision's or a resolution's
note longer than NOTE_MAX_CHARS is refused with a message naming the cap, on the screen page
and over the API, and nothing of that decision is saved; the page no longer cuts a long note
silently. A note at the cap is kept whole."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from screening.errors import NOTE_MAX_CHARS
from screening.models import Decision, Record, Resolution
from tests.screening_state_support import api_of, both_decide, dual_session
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def test_a_decision_note_past_the_cap_is_refused_over_the_api_and_one_at_the_cap_kept(
        team) -> None:  # noqa: F811
    session = dual_session(team)
    record = session.records.get(position=0)
    url = f"/api/screening/{session.pk}/decide/"
    rita = api_of(team.reviewer)

    refused = rita.post(url, {"record": record.pk, "values": {"oncological": "yes"},
                              "note": "x" * (NOTE_MAX_CHARS + 1)}, format="json")
    assert refused.status_code == 400
    assert f"at most {NOTE_MAX_CHARS:,} characters" in refused.json()["detail"]
    assert not Decision.objects.filter(record=record).exists()
    assert Record.objects.get(pk=record.pk).reviewer_count == 0

    kept = rita.post(url, {"record": record.pk, "values": {"oncological": "yes"},
                           "note": "y" * NOTE_MAX_CHARS}, format="json")
    assert kept.status_code == 200
    assert Decision.objects.get(record=record).note == "y" * NOTE_MAX_CHARS


def test_the_screen_page_refuses_a_long_note_instead_of_cutting_it(team) -> None:  # noqa: F811
    session = dual_session(team)
    record = session.records.get(position=0)
    page = Client()
    page.force_login(team.reviewer)
    answer = page.post(f"/screening/{session.pk}/decide.json", content_type="application/json",
                       data=json.dumps({"record": record.pk, "values": {"oncological": "no"},
                                        "note": "z" * 2500}))
    assert answer.status_code == 200
    assert Decision.objects.get(record=record).note == "z" * 2500

    too_long = page.post(f"/screening/{session.pk}/decide.json", content_type="application/json",
                         data=json.dumps({"record": record.pk, "values": {"oncological": "yes"},
                                          "note": "w" * (NOTE_MAX_CHARS + 1)}))
    assert too_long.status_code == 400
    assert "Nothing was saved" in too_long.json()["detail"]
    decision = Decision.objects.get(record=record)
    assert (decision.value, decision.note) == ("no", "z" * 2500)


def test_a_resolution_note_past_the_cap_is_refused_and_the_conflict_stays_open(
        team) -> None:  # noqa: F811
    session = dual_session(team)
    record = both_decide(team, session, ({"oncological": "yes"}, {"oncological": "no"}))
    answer = api_of(team.maintainer).post(
        f"/api/screening/{session.pk}/conflicts/",
        {"record": record.pk, "label": "oncological", "value": "no",
         "note": "n" * (NOTE_MAX_CHARS + 1)}, format="json")
    assert answer.status_code == 400
    assert f"at most {NOTE_MAX_CHARS:,} characters" in answer.json()["detail"]
    assert not Resolution.objects.filter(record=record).exists()
    assert "oncological" not in Record.objects.get(pk=record.pk).final
