"""PRISMA's diagram and its table read one state per record, so they cannot disagree (issue
50): on a session whose records stand everywhere on their path - excluded at title/abstract,
in conflict, sought, not retrieved, retrieved and waiting, included, excluded at full text, one
that left full text by a confirmed resolution, the rest marked no by the stop - every number
the page's diagram draws equals the number its table gives for that box, and the per-label
table's "included at full text" equals the studies included."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from django.urls import reverse

from screening import fulltext, services
from tests.pdf_support import report_attach
from tests.screening_review_support import client_of
from tests.screening_state_support import both_decide, dual_session
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db

# Each table row's key, and the words its box starts with in the diagram.
BOXES = {"identified": "Records identified", "duplicates_removed": "Duplicate records removed",
         "not_screened_marked_no": "Records marked as ineligible by automation tools",
         "screened": "Records screened", "not_yet_screened": "Not yet screened",
         "excluded_at_screening": "Records excluded",
         "reports_sought": "Reports sought for retrieval",
         "reports_not_retrieved": "Reports not retrieved",
         "reports_assessed": "Reports assessed for eligibility",
         "reports_awaiting_assessment": "Awaiting assessment",
         "reports_excluded": "Reports excluded", "studies_included": "Studies included in review"}


def _everywhere(team):  # noqa: F811
    session = dual_session(team)
    yes, no = ({"oncological": "yes"},) * 2, ({"oncological": "no"},) * 2
    both_decide(team, session, no, position=0)
    both_decide(team, session, ({"oncological": "yes"}, {"oncological": "no"}), position=1)
    both_decide(team, session, yes, position=2)  # sought
    missing, waiting, included, excluded, left = (
        both_decide(team, session, yes, position=p) for p in (3, 4, 5, 6, 7))
    fulltext.fulltext_not_retrieved(user=team.reviewer, record=missing, reason="Paywalled")
    for record in (waiting, included, excluded, left):
        report_attach(user=team.reviewer, record=record)
    for person in (team.reviewer, team.reviewer2):
        for record in (included, left):
            fulltext.fulltext_decision_record(user=person, record=record,
                                              values={"oncological": "yes"})
        fulltext.fulltext_decision_record(user=person, record=excluded,
                                          values={"oncological": "no"},
                                          reasons={"oncological": "Wrong population"})
    left.refresh_from_db()
    services.conflict_resolve(user=team.maintainer, record=left, label="oncological",
                              value="no", confirm_discard_fulltext=True, reason="Amended")
    return services.session_stop(user=team.maintainer, session=session, force=True)


def _drawn(svg: str) -> str:
    root = ET.fromstring(svg)
    return " ".join(" ".join(" ".join(node.itertext()).split())
                    for node in root.iter("{http://www.w3.org/2000/svg}text"))


def test_every_box_of_the_diagram_equals_its_row_in_the_table(team) -> None:  # noqa: F811
    session = _everywhere(team)
    html = client_of(team.viewer).get(reverse("screening:prisma", args=[session.pk])
                                      ).content.decode().replace("<strong>", "")
    table = {key: int(n) for key, n in re.findall(r'data-key="(\w+)">(\d+)<', html)}
    svg = html[html.index("<svg"):html.index("</svg>") + len("</svg>")]
    drawn = _drawn(svg)
    for key, words in BOXES.items():
        found = re.search(re.escape(words) + r" \(n = (\d+)\)", drawn)
        if found is None:  # drawn only when not 0
            assert key in ("not_yet_screened", "reports_awaiting_assessment"), key
            assert table.get(key, 0) == 0, key
            continue
        assert int(found.group(1)) == table[key], key
    assert table["studies_included"] == 1
    assert table["reports_sought"] == 5  # the one that left full text is not among them
    assert table["reports_awaiting_assessment"] == 2
    assert table["reports_assessed"] == table["reports_excluded"] + table["studies_included"]
    per_label = re.search(r'data-label="oncological">(?:<td>[^<]*</td>){4}<td>(\d+)</td>', html)
    assert int(per_label.group(1)) == table["studies_included"]
