"""A reviewer or a viewer may not edit PRISMA's sources (403, from projects.policy's
EDIT_PRISMA); a maintainer's request with any bad field - a negative or fractional count, a
count identified before import below the records imported from the file, a name over 100
characters, a file the session has not, more removed before import than the sources identified
beyond those imported - is refused with a 400 naming each field, and nothing of it is kept."""

from __future__ import annotations

import pytest
from django.urls import reverse

from projects.models import Activity
from screening.models import ScreeningSession
from tests.prisma_support import merged_session
from tests.screening_review_support import client_of
from tests.screening_state_support import api_of
from tests.screening_support import team  # noqa: F401

pytestmark = [pytest.mark.django_db,
              pytest.mark.pg("a locked session row and its JSON column, kept or left whole")]
GOOD = {"file": "embase_search.ris", "name": "Embase"}


def test_a_reviewer_and_a_viewer_are_refused(team) -> None:  # noqa: F811
    session = merged_session(team)
    body = {"sources": [{"file": "pubmed_search.nbib", "name": "PubMed"}]}
    for person in (team.reviewer, team.viewer):
        answer = api_of(person).post(reverse("api:screening_prisma_sources",
                                             args=[session.pk]), body, format="json")
        assert answer.status_code == 403, person
        assert "maintainer" in answer.json()["detail"].lower()
        form = client_of(person).post(reverse("screening:prisma_sources", args=[session.pk]),
                                      {"file": ["pubmed_search.nbib"], "name": ["PubMed"],
                                       "identified": [""], "kind": ["database"]})
        assert form.status_code == 403, person
    session.refresh_from_db()
    assert "prisma" not in session.source_facts
    assert not Activity.objects.filter(verb="screening_prisma_sources").exists()


@pytest.mark.parametrize(("body", "field", "words"), [
    ({"sources": [GOOD, {"file": "pubmed_search.nbib", "identified": -1}]},
     "sources[1].identified", "whole number, 0 or more"),
    ({"sources": [GOOD, {"file": "pubmed_search.nbib", "identified": 8.5}]},
     "sources[1].identified", "whole number"),
    ({"sources": [GOOD, {"file": "pubmed_search.nbib", "identified": "many"}]},
     "sources[1].identified", "whole number"),
    ({"sources": [GOOD, {"file": "pubmed_search.nbib", "identified": 6}]},
     "sources[1].identified", "fewer than the 7 records imported from pubmed_search.nbib"),
    ({"sources": [GOOD, {"file": "pubmed_search.nbib", "name": "P" * 101}]},
     "sources[1].name", "at most 100"),
    ({"sources": [GOOD, {"file": "medline.xml", "name": "Medline"}]},
     "sources[1].file", "no source file of this session"),
    ({"sources": [GOOD, {"file": "pubmed_search.nbib", "kind": "website"}]},
     "sources[1].kind", "database, register, other"),
    ({"sources": [GOOD, {"file": "pubmed_search.nbib", "identified": 9}],
      "removed_before_import": {"automation": 2, "other": 1}},
     "removed_before_import", "exceed the 2 the sources identified beyond those imported"),
    ({"sources": [GOOD], "removed_before_import": {"automation": -3}},
     "removed_before_import.automation", "whole number"),
    ({"sources": [GOOD], "source": []}, "body", "must be an object"),
])
def test_a_bad_field_is_named_and_nothing_is_kept(team, body, field, words) -> None:  # noqa: F811
    session = merged_session(team)
    api = api_of(team.maintainer)
    url = reverse("api:screening_prisma_sources", args=[session.pk])
    assert api.post(url, {"sources": [{"file": "scopus_search.csv", "name": "Scopus"}]},
                    format="json").status_code == 200
    before = ScreeningSession.objects.get(pk=session.pk).source_facts
    answer = api.post(url, body, format="json")
    assert answer.status_code == 400
    assert words in answer.json()["errors"][field], answer.json()
    assert ScreeningSession.objects.get(pk=session.pk).source_facts == before
    assert Activity.objects.filter(verb="screening_prisma_sources").count() == 1
    names = {s["file"]: s["name"] for s in api.get(reverse(
        "api:screening_export", args=[session.pk, "prisma"])).json()["sources"]}
    assert names["embase_search.ris"] == "embase_search.ris"  # the good field was not kept


def test_the_page_form_says_what_is_wrong_and_keeps_nothing(team) -> None:  # noqa: F811
    session = merged_session(team)
    answer = client_of(team.maintainer).post(
        reverse("screening:prisma_sources", args=[session.pk]),
        {"file": ["pubmed_search.nbib", "embase_search.ris", "scopus_search.csv"],
         "name": ["PubMed", "", ""], "identified": ["-4", "", ""],
         "kind": ["database"] * 3, "removed_automation": "", "removed_other": ""}, follow=True)
    html = answer.content.decode()
    assert "sources[0].identified: must be a whole number, 0 or more" in html
    session.refresh_from_db()
    assert "prisma" not in session.source_facts
    assert "PubMed" not in html.split('id="prisma-diagram"')[1].split("</svg>")[0]
    cut = client_of(team.maintainer).post(
        reverse("screening:prisma_sources", args=[session.pk]),
        {"file": ["pubmed_search.nbib", "embase_search.ris"], "name": ["PubMed"],
         "identified": ["9", ""], "kind": ["database"] * 2}, follow=True)
    assert "each row needs its file, name, count and kind" in cut.content.decode()
    session.refresh_from_db()
    assert "prisma" not in session.source_facts
