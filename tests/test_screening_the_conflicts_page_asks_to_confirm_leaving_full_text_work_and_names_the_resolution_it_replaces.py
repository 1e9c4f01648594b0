"""The conflicts page holds a record a maintainer names (`?record=&label=`), conflict or not.

Both reviewers said unsure, so the record went to full text, where it was included. The lead
opens its title/abstract label from the full-text page and excludes it: refused (409) on the
same card, saying why, her note kept, nothing written; a confirmation without a reason is
refused too; with both it goes through, the reason on the resolution. A conflict resolved by
someone else while her page was open comes back naming that resolution, and her second try
replaces it.
"""

from __future__ import annotations

import pytest
from django.test import Client

from screening import services
from screening.models import Record, RecordState, Resolution
from tests.pdf_support import report_attach
from tests.screening_state_support import api_of, both_decide, dual_session
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def _client(person) -> Client:
    client = Client()
    client.force_login(person)
    return client


def test_leaving_full_text_work_is_asked_then_confirmed_with_a_reason(team) -> None:  # noqa: F811
    session = dual_session(team)
    unsure = {"oncological": "unsure"}
    record = both_decide(team, session, (unsure, unsure))
    report_attach(user=team.reviewer, record=record)
    for person in (team.reviewer, team.reviewer2):
        assert api_of(person).post(f"/api/screening/{session.pk}/fulltext/{record.pk}/decide/",
                                   {"values": {"oncological": "yes"}},
                                   format="json").status_code == 200
    mona = _client(team.maintainer)
    held = f"/screening/{session.pk}/conflicts/?record={record.pk}&label=oncological"
    assert held in mona.get(f"/screening/{session.pk}/fulltext/{record.pk}/").content.decode(
        ).replace("&amp;", "&")
    page = mona.get(held)
    assert page.status_code == 200
    assert "This record has full-text work" in page.content.decode()
    assert "Resolved already" not in page.content.decode()

    url = f"/screening/{session.pk}/conflicts/"
    body = {"record": record.pk, "label": "oncological", "stage": "title_abstract",
            "value": "no", "note": "adults only after all"}
    refused = mona.post(url, body)
    assert refused.status_code == 409
    text = refused.content.decode()
    assert "Not resolved" in text
    assert "full-text work" in text
    assert 'value="adults only after all"' in text
    assert not Resolution.objects.filter(record=record).exists()
    assert Record.objects.get(pk=record.pk).state == RecordState.INCLUDED

    mona.post(url, {**body, "confirm_discard_fulltext": "true"})
    assert not Resolution.objects.filter(record=record).exists()
    assert "Say why" in mona.get(url).content.decode()

    done = mona.post(url, {**body, "confirm_discard_fulltext": "true",
                           "discard_reason": "Protocol amended: adults only"})
    assert done.status_code == 302
    record.refresh_from_db()
    assert record.state == RecordState.EXCLUDED
    assert Resolution.objects.get(record=record).discard_reason == "Protocol amended: adults only"


def test_a_second_resolution_names_the_one_it_replaces(team) -> None:  # noqa: F811
    session = dual_session(team)
    record = both_decide(team, session, ({"oncological": "yes"}, {"oncological": "no"}))
    mona = _client(team.maintainer)
    url = f"/screening/{session.pk}/conflicts/"
    assert mona.get(url).content.decode().count(f'data-record="{record.pk}"') == 1
    services.conflict_resolve(user=team.owner, record=record, label="oncological", value="yes")

    body = {"record": record.pk, "label": "oncological", "stage": "title_abstract",
            "value": "no"}
    refused = mona.post(url, body)  # her page was open before the owner resolved it
    assert refused.status_code == 409
    text = refused.content.decode()
    standing = Resolution.objects.get(record=record)
    assert "Resolved already" in text
    assert f"<strong>{team.owner.username}</strong>" in text
    assert f'name="replaces" value="{standing.pk}"' in text
    assert Resolution.objects.get(record=record).value == "yes"

    assert mona.post(url, {**body, "replaces": str(standing.pk)}).status_code == 302
    assert Resolution.objects.get(record=record).value == "no"
    assert Record.objects.get(pk=record.pk).final == {"oncological": "no"}
