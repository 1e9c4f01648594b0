"""A maintainer's PRISMA sources are identification, which says nothing of any decision: a
blind reviewer reads the names and counts from before import (and the log line saying who
changed them), and still no box after identification - the automation box included, since the
stopping rule's part of it follows the final values - on the page, the SVG, the PDF and the
JSON."""

from __future__ import annotations

import io

import pytest
from django.urls import reverse
from pypdf import PdfReader

from screening import services
from tests.prisma_support import drawn, merged_session
from tests.screening_review_support import client_of
from tests.screening_state_support import api_of
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def test_the_blind_reviewer_sees_the_sources_and_nothing_after(team) -> None:  # noqa: F811
    session = merged_session(team, reviewers_per_record=2)
    assert session.blind
    record = session.records.order_by("position").first()
    services.decision_record(user=team.reviewer2, record=record, values={"included": "yes"})
    api_of(team.maintainer).post(
        reverse("api:screening_prisma_sources", args=[session.pk]),
        {"sources": [{"file": "pubmed_search.nbib", "name": "PubMed", "identified": 9}],
         "removed_before_import": {"automation": 1}}, format="json")
    rita = client_of(team.reviewer)
    counts = rita.get(reverse("api:screening_export", args=[session.pk, "prisma"])).json()
    assert counts["hidden_while_blind"]
    assert (counts["identified"], counts["removed_for_other_reasons"]) == (23, 1)
    assert counts["before_import"]["automation"] == 1
    for key in ("removed_by_automation", "screened", "not_yet_screened", "studies_included",
                "reports_of_included_studies", "reports_sought"):
        assert counts[key] is None, key
    svg = drawn(rita.get(reverse("screening:prisma_download", args=[session.pk, "svg"])
                         ).content.decode())
    pdf = " ".join(PdfReader(io.BytesIO(rita.get(reverse(
        "screening:prisma_download", args=[session.pk, "pdf"])).content)
    ).pages[0].extract_text().split())
    for text in (svg, pdf):
        assert "PubMed (n = 9)" in text
        assert "Records identified (n = 23)" in text
        assert "Records screened (n hidden while blind)" in text
        assert "Reports of included studies (n hidden while blind)" in text
        assert "Records marked as ineligible by automation tools (n hidden while blind)" in text
        assert "(n = 15)" not in text  # the records not yet screened stay unsaid
    page = rita.get(reverse("screening:prisma", args=[session.pk])).content.decode()
    assert 'id="prisma-hidden"' in page
    assert 'id="prisma-sources-form"' not in page
    summaries = [row["summary"] for row in rita.get(reverse(
        "api:project_activity", args=[team.project.pk])).json()["results"]]
    assert any("edited PRISMA" in s for s in summaries)
