"""PRISMA 2020's Included box says "Studies included in review" and "Reports of included
studies": a record included at full text is one report, so the reports are counted from the
records' state as every other box is, in the counts, the diagram and the table alike."""

from __future__ import annotations

import pytest
from django.urls import reverse

from screening import fulltext
from tests.pdf_support import report_attach
from tests.prisma_support import drawn, page_svg, table
from tests.screening_review_support import client_of
from tests.screening_state_support import api_of, both_decide, dual_session
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db
YES = ({"oncological": "yes"},) * 2


def test_the_reports_of_included_studies_equal_the_studies_included(team) -> None:  # noqa: F811
    session = dual_session(team)
    included, also, excluded, waiting = (both_decide(team, session, YES, position=p)
                                         for p in range(4))
    for record in (included, also, excluded, waiting):
        report_attach(user=team.reviewer, record=record)
    for person in (team.reviewer, team.reviewer2):
        for record in (included, also):
            fulltext.fulltext_decision_record(user=person, record=record,
                                              values={"oncological": "yes"})
        fulltext.fulltext_decision_record(user=person, record=excluded,
                                          values={"oncological": "no"},
                                          reasons={"oncological": "Wrong population"})
    counts = api_of(team.viewer).get(reverse("api:screening_export",
                                             args=[session.pk, "prisma"])).json()
    assert counts["studies_included"] == counts["reports_of_included_studies"] == 2
    assert counts["reports_assessed"] == 3  # the one waiting is not included, nor its report
    html = client_of(team.viewer).get(reverse("screening:prisma", args=[session.pk])
                                      ).content.decode()
    text = drawn(page_svg(html))
    assert "Studies included in review (n = 2) Reports of included studies (n = 2)" in text
    assert table(html)["reports_of_included_studies"] == 2
