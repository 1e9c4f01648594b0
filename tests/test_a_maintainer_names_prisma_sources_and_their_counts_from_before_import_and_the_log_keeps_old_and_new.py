"""PRISMA a journal takes (issue 50): a maintainer names each source file of the collection
("PubMed" for pubmed_search.nbib), gives the records a source identified before import (more
than were exported), its kind, and how many of those never imported automation tools removed;
the diagram (SVG, PDF) and the table use the names and counts, the table keeps each file's own
name beside its new one, and the project's log holds every change with its old and new value.
The page's form does the same as the API route."""

from __future__ import annotations

import io

import pytest
from django.urls import reverse
from pypdf import PdfReader

from projects.models import Activity
from tests.prisma_support import drawn, merged_session, page_svg, table
from tests.screening_review_support import client_of
from tests.screening_state_support import api_of
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db
EDIT = {"sources": [{"file": "pubmed_search.nbib", "name": "PubMed", "identified": 10},
                    {"file": "scopus_search.csv", "name": "ClinicalTrials.gov",
                     "kind": "register"}],
        "removed_before_import": {"automation": 2}}


def test_the_api_edit_is_drawn_tabled_and_logged(team) -> None:  # noqa: F811
    session = merged_session(team)
    answer = api_of(team.maintainer).post(
        reverse("api:screening_prisma_sources", args=[session.pk]), EDIT, format="json")
    assert answer.status_code == 200, answer.content
    assert answer.json()["identified"] == 24  # 21 imported + 3 PubMed reported beyond them
    assert answer.json()["before_import"] == {"identified_beyond_imported": 3, "automation": 2,
                                              "other": 0, "reason_not_given": 1}
    client = client_of(team.viewer)
    html = client.get(reverse("screening:prisma", args=[session.pk])).content.decode()
    text = drawn(page_svg(html))
    for line in ("Records identified (n = 24) from:", "Databases (n = 18):",
                 "PubMed (n = 10)", "embase_search.ris (n = 8)", "Registers (n = 6):",
                 "ClinicalTrials.gov (n = 6)", "Duplicate records removed (n = 6)",
                 "Records marked as ineligible by automation tools (n = 2)",
                 "Records removed for other reasons (n = 1)"):
        assert line in text, line
    assert "pubmed_search.nbib" not in text
    assert "PubMed (pubmed_search.nbib)" in html
    assert "ClinicalTrials.gov (scopus_search.csv)" in html
    assert "(7 imported)" in html
    counted = table(html)
    assert (counted["identified"], counted["removed_by_automation"],
            counted["removed_for_other_reasons"]) == (24, 2, 1)
    pdf = client.get(reverse("screening:prisma_download", args=[session.pk, "pdf"])).content
    pdf_text = " ".join(PdfReader(io.BytesIO(pdf)).pages[0].extract_text().split())
    assert "PubMed (n = 10)" in pdf_text
    assert "Records identified (n = 24)" in pdf_text
    logged = Activity.objects.get(verb="screening_prisma_sources")
    assert logged.actor == team.maintainer
    changes = {(c["source"], c["field"]): (c["old"], c["new"]) for c in logged.detail["changes"]}
    assert changes == {("pubmed_search.nbib", "name"): ("pubmed_search.nbib", "PubMed"),
                       ("pubmed_search.nbib", "identified"): (7, 10),
                       ("scopus_search.csv", "name"): ("scopus_search.csv",
                                                       "ClinicalTrials.gov"),
                       ("scopus_search.csv", "kind"): ("database", "register"),
                       ("", "removed_before_import.automation"): (0, 2)}
    assert "'pubmed_search.nbib' → 'PubMed'" in logged.summary
    summaries = [row["summary"] for row in client.get(
        reverse("api:project_activity", args=[team.project.pk])).json()["results"]]
    assert any("7 → 10" in s for s in summaries)


def test_only_the_fields_named_change_and_an_empty_one_puts_the_files_back(
        team) -> None:  # noqa: F811
    session = merged_session(team)
    api = api_of(team.maintainer)
    url = reverse("api:screening_prisma_sources", args=[session.pk])
    api.post(url, EDIT, format="json")
    api.post(url, {"sources": [{"file": "pubmed_search.nbib", "identified": 12}]}, format="json")
    sources = {s["file"]: s for s in api.get(reverse(
        "api:screening_export", args=[session.pk, "prisma"])).json()["sources"]}
    assert (sources["pubmed_search.nbib"]["name"],
            sources["pubmed_search.nbib"]["identified"]) == ("PubMed", 12)
    assert sources["scopus_search.csv"]["kind"] == "register"
    again = api.post(url, {"sources": [{"file": "pubmed_search.nbib", "name": "",
                                        "identified": None}],
                           "removed_before_import": {"automation": 0}}, format="json")
    assert again.status_code == 200, again.content
    pubmed = next(s for s in again.json()["sources"] if s["file"] == "pubmed_search.nbib")
    assert (pubmed["name"], pubmed["identified"], pubmed["imported"]) == (
        "pubmed_search.nbib", 7, 7)
    assert again.json()["identified"] == 21
    unchanged = api.post(url, {"sources": [{"file": "pubmed_search.nbib", "name": ""}]},
                         format="json")
    assert unchanged.json()["changes"] == []
    assert Activity.objects.filter(verb="screening_prisma_sources").count() == 3


def test_the_page_form_is_a_maintainers_and_saves_the_same(team) -> None:  # noqa: F811
    session = merged_session(team)
    page = reverse("screening:prisma", args=[session.pk])
    mona = client_of(team.maintainer)
    assert 'id="prisma-sources-form"' in mona.get(page).content.decode()
    assert 'id="prisma-sources-form"' not in client_of(team.reviewer).get(page).content.decode()
    files = ["pubmed_search.nbib", "embase_search.ris", "scopus_search.csv"]
    answer = mona.post(reverse("screening:prisma_sources", args=[session.pk]), {
        "file": files, "name": ["PubMed", "", "Scopus"], "identified": ["9", "", ""],
        "kind": ["database", "database", "database"], "removed_automation": "",
        "removed_other": "2"}, follow=True)
    html = answer.content.decode()
    assert "PRISMA sources saved" in html
    text = drawn(page_svg(html))
    for line in ("Records identified (n = 23)", "PubMed (n = 9)", "Scopus (n = 6)",
                 "embase_search.ris (n = 8)", "Records removed for other reasons (n = 2)"):
        assert line in text, line
    assert "Scopus (scopus_search.csv)" in html
    assert Activity.objects.filter(verb="screening_prisma_sources").count() == 1
