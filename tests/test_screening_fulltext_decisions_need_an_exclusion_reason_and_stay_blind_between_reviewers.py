"""Deciding at full text (issue 35, item 6): yes or no per label, a "no" always with one of the
session's exclusion reasons; dual review and blinding apply as at title/abstract.

While the session is blind, GET on a report shows a reviewer only their own full-text
decisions and no final value, a viewer only the final ones, a maintainer everything. Two
agreeing reviewers make the label final with their reason; disagreeing ones wait for a
maintainer's resolution (with a reason to exclude). A report marked not retrieved (with a
reason) is not decided on.
"""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from api.tokens import token_create
from screening import desk, selectors, services
from screening.models import Decision, FullTextReport, Record, Stage
from tests.pdf_support import report_attach
from tests.screening_support import team  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.pg(
    "row locks and JSON finals at full text: two stages of decisions on one record")]

REASONS = ["Wrong population", "Wrong outcome"]


def _api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=user, name='t')[1]}")
    return client


def _included(team, session):  # noqa: F811
    record = selectors.record_next(user=team.reviewer, session=session)
    for person in (team.reviewer, team.reviewer2):
        services.decision_record(user=person, record=record, values={"oncological": "yes"})
    return record


def test_full_text_decisions_need_a_reason_and_stay_blind(team) -> None:  # noqa: F811
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="FT",
                                      labels=["oncological"], reviewers_per_record=2)
    desk.session_desk_update(user=team.maintainer, session=session, criteria="",
                             include_terms="", exclude_terms="",
                             exclusion_reasons="\n".join(REASONS), screeners=[])
    agreed, disputed, missing = (_included(team, session) for _ in range(3))
    # Full text opens to a blind session's reviewers at the stop (issue 50): before it, which
    # records reached it would tell each the other's answers.
    services.session_stop(user=team.maintainer, session=session, force=True)
    for record in (agreed, disputed):
        report_attach(user=team.reviewer, record=record)
    rita, remy = _api(team.reviewer), _api(team.reviewer2)
    mona, vera = _api(team.maintainer), _api(team.viewer)
    base = f"/api/screening/{session.pk}/fulltext/"

    def decide(client, record, value, reason=""):
        return client.post(f"{base}{record.pk}/decide/", {
            "values": {"oncological": value}, "reasons": {"oncological": reason}},
            format="json")

    refused = decide(rita, agreed, "no")
    assert refused.status_code == 400
    assert "Choose an exclusion reason" in refused.json()["detail"]
    assert decide(rita, agreed, "no", "Not ours").status_code == 400
    assert decide(rita, agreed, "unsure").status_code == 400  # yes or no at full text
    assert decide(vera, agreed, "yes").status_code == 403
    assert decide(rita, agreed, "no", "Wrong outcome").status_code == 200
    assert decide(rita, agreed, "no", "Wrong outcome").status_code == 200  # a retry: one row

    # Blind: Remy sees nothing of Rita's, and no final value; Mona sees her decision.
    seen = remy.get(f"{base}{agreed.pk}/").json()
    assert seen["decisions"] == []
    assert seen["final"] is None
    assert [d["reviewer"] for d in mona.get(f"{base}{agreed.pk}/").json()["decisions"]] == [
        "rita"]
    assert decide(remy, agreed, "no", "Wrong population").status_code == 200
    record = Record.objects.get(pk=agreed.pk)
    assert record.fulltext_final == {"oncological": "no"}
    assert record.fulltext_reasons["oncological"] in REASONS
    assert vera.get(f"{base}{agreed.pk}/").json()["final"] == {"oncological": "no"}
    assert vera.get(f"{base}{agreed.pk}/").json()["decisions"] == []
    assert Decision.objects.filter(record=agreed, stage=Stage.FULL_TEXT).count() == 2
    # The title/abstract decisions are untouched: the two stages keep rows of their own.
    assert Record.objects.get(pk=agreed.pk).final == {"oncological": "yes"}

    # Disagreement waits for a maintainer, who excludes with a reason.
    assert decide(rita, disputed, "yes").status_code == 200
    assert decide(remy, disputed, "no", "Wrong population").status_code == 200
    assert Record.objects.get(pk=disputed.pk).fulltext_final == {}
    page = _page_client(team.maintainer).post(
        f"/screening/{session.pk}/fulltext/{disputed.pk}/",
        {"action": "resolve", "label": "oncological", "value": "no",
         "reason": "Wrong population"})
    assert page.status_code == 302
    disputed.refresh_from_db()
    assert disputed.fulltext_final == {"oncological": "no"}
    assert disputed.fulltext_reasons == {"oncological": "Wrong population"}
    late = decide(rita, disputed, "no", "Wrong outcome")
    assert late.status_code == 409  # the resolution stands: a conflict, not a bad input
    assert "resolved" in late.json()["detail"]

    # Not retrieved needs its reason, and is then not decided on.
    url = f"{base}{missing.pk}/not-retrieved/"
    assert rita.post(url, {"reason": ""}, format="json").status_code == 400
    answer = rita.post(url, {"reason": "Conference abstract only"}, format="json")
    assert answer.json()["status"] == "not_retrieved"
    assert FullTextReport.objects.get(record=missing).not_retrieved_reason == (
        "Conference abstract only")
    assert "not retrieved" in decide(rita, missing, "yes").json()["detail"]


def _page_client(user):
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client
