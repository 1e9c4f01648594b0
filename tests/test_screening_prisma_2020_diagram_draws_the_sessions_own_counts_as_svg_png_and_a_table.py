"""The PRISMA 2020 flow diagram (issue 35, item 7), drawn from the session's own counts: records
identified, marked ineligible by the stopping rule (named), screened and excluded; reports
sought, not retrieved, assessed and excluded with each reason; studies included. The SVG
(`GET /api/screening/<id>/export/prisma-svg/`, image/svg+xml) holds every count as text; the
PNG is a PNG; the session page shows the counts as a table, not raw JSON."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from dataset_management.models import Dataset
from screening import export, fulltext, services
from screening.models import ScreeningSession
from tests.pdf_support import report_attach
from tests.plugins.datasets import ROOT
from tests.screening_review_support import CITED_ROWS, cited_dataset_make, client_of
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db
DEDUP_FILES = [ROOT / "tests" / "fixtures" / "dedup" / name
               for name in ("pubmed_search.nbib", "embase_search.ris", "scopus_search.csv")]
SIX = [*CITED_ROWS, ("31000005", "10.1000/x.5", "Ito H", "2022", "NEJM",
                     "Colon polyps were removed early. Bleeding was rare."),
       ("31000006", "", "Roe P", "2015", "Gut", "Gastric ulcers healed faster. Pain eased.")]


@pytest.fixture
def reviewed(team) -> ScreeningSession:  # noqa: F811
    session = services.session_create(user=team.maintainer, name="Flow", labels=["oncological"],
                                      dataset=cited_dataset_make(team, rows=SIX))
    ScreeningSession.objects.filter(pk=session.pk).update(
        exclusion_reasons=["Wrong population", "Not a trial"])
    r = list(session.records.order_by("position"))
    for record, value in zip(r[:5], ["no", "no", "yes", "yes", "yes"], strict=True):
        services.decision_record(user=team.reviewer, record=record,
                                 values={"oncological": value})
    r = list(session.records.order_by("position").select_related("session"))
    fulltext.fulltext_not_retrieved(user=team.reviewer, record=r[2],
                                    reason="paywalled, author did not reply")
    for record in r[3:5]:
        report_attach(user=team.reviewer, record=record)
    fulltext.fulltext_decision_record(user=team.reviewer, record=r[3],
                                      values={"oncological": "no"},
                                      reasons={"oncological": "Wrong population"})
    fulltext.fulltext_decision_record(user=team.reviewer, record=r[4],
                                      values={"oncological": "yes"})
    # The sixth is never read: the stop (forced here) marks it no - automation in PRISMA.
    return services.session_stop(user=team.maintainer, session=session, force=True)


EXPECTED = {"identified": 6, "duplicates_removed": 0, "not_screened_marked_no": 1,
            "screened": 5, "excluded_at_screening": 2, "reports_sought": 3,
            "reports_not_retrieved": 1, "reports_assessed": 2, "reports_excluded": 1,
            "studies_included": 1}


def test_the_counts_follow_the_sessions_rows(reviewed) -> None:
    counts = export.prisma_counts(reviewed)
    assert {key: counts[key] for key in EXPECTED} == EXPECTED
    assert counts["reports_excluded_by_reason"] == {"Wrong population": 1}
    assert [(s["name"], s["identified"]) for s in counts["sources"]] == [("Cited", 6)]
    assert counts["stopping_rule"]  # the rule is named, and "(forced)" said
    assert "forced" in counts["stopping_rule"]


def _svg_text(svg: str) -> str:
    """Every text of the drawing, its wrapped lines joined as one reads them."""
    root = ET.fromstring(svg)
    return " ".join(" ".join(" ".join(node.itertext()).split()) for node in root.iter(
        "{http://www.w3.org/2000/svg}text"))


def test_the_api_svg_states_every_count_as_text(reviewed, team) -> None:  # noqa: F811
    api = APIClient()
    api.force_authenticate(team.viewer)  # a download: viewers may read it
    answer = api.get(reverse("api:screening_export", args=[reviewed.pk, "prisma-svg"]))
    assert answer.status_code == 200
    assert answer["Content-Type"].startswith("image/svg+xml")
    text = _svg_text(answer.content.decode())
    for line in ("Records identified (n = 6)", "Cited (n = 6)",
                 "Duplicate records removed (n = 0)",
                 "Records marked as ineligible by automation tools (n = 1)",
                 "Records screened (n = 5)", "Records excluded (n = 2)",
                 "Reports sought for retrieval (n = 3)", "Reports not retrieved (n = 1)",
                 "Reports assessed for eligibility (n = 2)", "Reports excluded (n = 1)",
                 "Wrong population (n = 1)", "Studies included in review (n = 1)",
                 "Identification", "Screening", "Included"):
        assert line in text, line
    assert "stopping rule" in text


def test_the_page_draws_the_diagram_and_offers_svg_and_png(reviewed, team) -> None:  # noqa: F811
    client = client_of(team.viewer)
    page = client.get(reverse("screening:prisma", args=[reviewed.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert "<svg" in html
    assert "Studies included in review (n = 1)" in html
    svg = client.get(reverse("screening:prisma_download", args=[reviewed.pk, "svg"]))
    assert svg["Content-Type"].startswith("image/svg+xml")
    assert "Reports not retrieved (n = 1)" in _svg_text(svg.content.decode())
    png = client.get(reverse("screening:prisma_download", args=[reviewed.pk, "png"]))
    assert png["Content-Type"] == "image/png"
    assert png.content[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(png.content) > 10_000  # a drawn diagram, not an empty canvas
    api = APIClient()
    api.force_authenticate(team.viewer)
    assert api.get(reverse("api:screening_export", args=[reviewed.pk, "prisma-png"])
                   ).content[:4] == b"\x89PNG"


def test_the_counts_read_as_a_table_linked_from_the_session_page(reviewed,
                                                                   team) -> None:  # noqa: F811
    client = client_of(team.viewer)
    detail = client.get(reverse("screening:detail", args=[reviewed.pk])).content.decode()
    assert f'id="prisma-link" href="{reverse("screening:prisma", args=[reviewed.pk])}"' in detail
    html = client.get(reverse("screening:prisma", args=[reviewed.pk])).content.decode()
    assert 'id="prisma-table"' in html
    for key, value in EXPECTED.items():
        assert f'data-key="{key}">{value}<' in html.replace("<strong>", ""), key
    assert "Wrong population" in html


def test_a_merged_collection_is_identified_per_file_with_its_duplicates_removed(
        user, media_root) -> None:
    """Three exports of one search merged on import (tests/fixtures/dedup, 21 records, 6
    duplicates): PRISMA's first box names each file with its count, the second the duplicates,
    and the records screened start from the 15 kept."""
    call_command("import_dataset", *map(str, DEDUP_FILES), "--name", "Living review",
                 "--owner", user.username, "--unlabelled", stdout=StringIO())
    dataset = Dataset.objects.get(name="Living review")
    session = services.session_create(user=user, dataset=dataset, name="Merged",
                                      labels=["included"])
    counts = export.prisma_counts(session)
    assert [(s["name"], s["identified"]) for s in counts["sources"]] == [
        ("pubmed_search.nbib", 7), ("embase_search.ris", 8), ("scopus_search.csv", 6)]
    assert (counts["identified"], counts["duplicates_removed"], counts["records"]) == (21, 6, 15)
    assert counts["duplicates_note"] == ""
    api = APIClient()
    api.force_authenticate(user)
    text = _svg_text(api.get(reverse("api:screening_export",
                                     args=[session.pk, "prisma-svg"])).content.decode())
    for line in ("Records identified (n = 21)", "pubmed_search.nbib (n = 7)",
                 "embase_search.ris (n = 8)", "scopus_search.csv (n = 6)",
                 "Duplicate records removed (n = 6)", "Not yet screened (n = 15)"):
        assert line in text, line
