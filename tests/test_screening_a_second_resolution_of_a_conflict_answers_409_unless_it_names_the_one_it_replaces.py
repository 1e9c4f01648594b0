"""Issue 50, fault 7: two maintainers resolve the same conflict. The first wins; the second
answers 409 with who resolved it, when and how, and changes nothing. Sent again with
`replaces` (the standing resolution's id) it goes through, and the log says the resolution was
changed, from what to what. A `replaces` that names another resolution is refused as well. The
same holds at full text."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from projects import services as project_services
from projects.models import Activity
from screening.models import Record, Resolution, Stage
from tests.pdf_support import report_attach
from tests.screening_state_support import api_of, both_decide, dual_session
from tests.screening_support import team  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.pg("a resolution under the record's lock")]


def test_the_second_resolution_is_refused_until_it_names_the_first(team) -> None:  # noqa: F811
    session = dual_session(team)
    record = both_decide(team, session, ({"oncological": "yes"}, {"oncological": "no"}))
    lead = get_user_model().objects.create_user("lena", "lena@example.org", "pw-123456")
    project_services.member_set(actor=team.owner, project=team.project, member=lead,
                                role="maintainer")
    mona, lena = api_of(team.maintainer), api_of(lead)
    url = f"/api/screening/{session.pk}/conflicts/"
    first = mona.post(url, {"record": record.pk, "label": "oncological", "value": "no"},
                      format="json")
    assert first.status_code == 200
    standing = Resolution.objects.get(record=record)

    second = lena.post(url, {"record": record.pk, "label": "oncological", "value": "yes"},
                       format="json")
    assert second.status_code == 409
    body = second.json()
    assert body["resolution"] == {"id": standing.pk, "resolver": "mona", "value": "no",
                                  "exclusion_reason": "",
                                  "resolved_at": standing.resolved_at.isoformat()}
    assert "mona already resolved oncological = no" in body["detail"]
    assert f"replaces={standing.pk}" in body["detail"]
    assert Record.objects.get(pk=record.pk).final == {"oncological": "no"}

    wrong = lena.post(url, {"record": record.pk, "label": "oncological", "value": "yes",
                            "replaces": standing.pk + 100}, format="json")
    assert wrong.status_code == 409
    assert Resolution.objects.get(record=record).value == "no"

    changed = lena.post(url, {"record": record.pk, "label": "oncological", "value": "yes",
                              "replaces": standing.pk}, format="json")
    assert changed.status_code == 200
    assert changed.json()["final"] == {"oncological": "yes"}
    assert Resolution.objects.get(record=record).resolver == lead
    line = Activity.objects.filter(verb="screening_resolve").latest("pk")
    assert "lena changed the resolution of oncological from no to yes" in line.summary
    assert line.detail["replaced"] == standing.pk
    assert Activity.objects.filter(verb="screening_resolve").count() == 2


def test_at_full_text_too(team) -> None:  # noqa: F811
    session = dual_session(team)
    record = both_decide(team, session, ({"oncological": "yes"}, {"oncological": "yes"}))
    report_attach(user=team.reviewer, record=record)
    base = f"/api/screening/{session.pk}/fulltext/{record.pk}/decide/"
    api_of(team.reviewer).post(base, {"values": {"oncological": "yes"}}, format="json")
    api_of(team.reviewer2).post(base, {"values": {"oncological": "no"},
                                       "reasons": {"oncological": "Wrong outcome"}},
                                format="json")
    mona, owner = api_of(team.maintainer), api_of(team.owner)
    url = f"/api/screening/{session.pk}/conflicts/"
    body = {"record": record.pk, "label": "oncological", "stage": "full_text"}
    assert mona.post(url, {**body, "value": "yes"}, format="json").status_code == 200
    standing = Resolution.objects.get(record=record, stage=Stage.FULL_TEXT)
    again = owner.post(url, {**body, "value": "no", "exclusion_reason": "Wrong outcome"},
                       format="json")
    assert again.status_code == 409
    assert again.json()["resolution"]["value"] == "yes"
    replaced = owner.post(url, {**body, "value": "no", "exclusion_reason": "Wrong outcome",
                                "replaces": standing.pk}, format="json")
    assert replaced.status_code == 200
    record.refresh_from_db()
    assert record.fulltext_final == {"oncological": "no"}
    assert record.state == "excluded_full_text"
