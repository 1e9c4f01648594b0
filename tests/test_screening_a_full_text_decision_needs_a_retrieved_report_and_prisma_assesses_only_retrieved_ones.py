"""Issue 50, fault 3: a full-text decision on a report never retrieved is refused with 409
saying to attach the PDF or mark it not retrieved, and nothing is kept; once the PDF is attached
the same decision is taken. A report marked not retrieved is not decided on either (409), and
PRISMA counts it as not retrieved, never as assessed: "assessed for eligibility" counts only
retrieved reports that were decided, the rest wait ("awaiting assessment")."""

from __future__ import annotations

import pytest

from screening import export
from screening.models import Decision, FullTextReport, RecordState, Stage
from tests.pdf_support import report_attach
from tests.screening_state_support import api_of, both_decide, dual_session
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def test_decisions_wait_for_a_retrieved_report_and_only_those_are_assessed(team) -> None:  # noqa: F811
    session = dual_session(team)
    yes = ({"oncological": "yes"}, {"oncological": "yes"})
    sought, missing, assessed = (both_decide(team, session, yes, position=p) for p in (0, 1, 2))
    rita, remy = api_of(team.reviewer), api_of(team.reviewer2)
    base = f"/api/screening/{session.pk}/fulltext/"

    def decide(client, record):
        return client.post(f"{base}{record.pk}/decide/", {"values": {"oncological": "yes"}},
                           format="json")

    refused = decide(rita, sought)
    assert refused.status_code == 409
    assert refused.json()["detail"] == ("This report has not been retrieved yet: attach its "
                                        "PDF, or mark it not retrieved, before deciding on it.")
    assert refused.json()["status"] == "sought"
    assert not Decision.objects.filter(record=sought, stage=Stage.FULL_TEXT).exists()
    assert not FullTextReport.objects.filter(record=sought).exists()  # a refusal writes nothing

    assert rita.post(f"{base}{missing.pk}/not-retrieved/", {"reason": "Paywalled"},
                     format="json").status_code == 200
    not_retrieved = decide(rita, missing)
    assert not_retrieved.status_code == 409
    assert "marked not retrieved" in not_retrieved.json()["detail"]

    report_attach(user=team.reviewer, record=assessed)
    assert decide(rita, assessed).status_code == 200
    assert decide(remy, assessed).status_code == 200
    assessed.refresh_from_db()
    assert assessed.state == RecordState.INCLUDED

    counts = export.prisma_counts(session)
    assert {key: counts[key] for key in (
        "reports_sought", "reports_not_retrieved", "reports_assessed",
        "reports_awaiting_assessment", "studies_included")} == {
        "reports_sought": 3, "reports_not_retrieved": 1, "reports_assessed": 1,
        "reports_awaiting_assessment": 1, "studies_included": 1}

    # A report already assessed cannot be marked not retrieved afterwards: it was retrieved.
    late = rita.post(f"{base}{assessed.pk}/not-retrieved/", {"reason": "Lost"}, format="json")
    assert late.status_code == 409
    assert "Included at full text" in late.json()["detail"]
    assert FullTextReport.objects.get(record=assessed).status == "retrieved"
