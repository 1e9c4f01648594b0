"""Blind without side channels (issue 50): a blind reviewer fetches every screening route they
can read - the session page and its poll, the screen page, next record and recent, the API's
session and next record, every export (CSV, RIS, JSON Lines, PRISMA JSON, SVG, PNG; page and
API), the PRISMA page, the full-text list and a report (page and API), the conflicts (403), the
session lists and the project's activity log (page and API) - before and after each thing
another person does: the other reviewer says yes, says no, decides a record she has not read,
a maintainer resolves their conflict, marks a report not retrieved and decides at full text.
Every answer must be byte-equal, once CSRF tokens (new per response) are set aside.

Those who see everything - a maintainer, and after the owner ends blinding the reviewer and a
viewer - still read the full figures.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.files.base import ContentFile
from django.test import Client
from django.urls import reverse

from screening import desk, fulltext, services
from screening.models import Record
from tests.pdf_support import pdf_bytes
from tests.screening_review_support import (
    cited_dataset_make,
    client_of,
    dual_session_make,
    export_text,
)
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db
REASON = "Wrong population"
# The one thing allowed to differ between two identical pages: a fresh CSRF token.
_CSRF = re.compile(rb'(name="csrfmiddlewaretoken" value=")[^"]+"|(csrftoken=)[^;"]+')


def _routes(session: Any, record: Record, project_id: int) -> list[str]:
    pk = session.pk
    pages = [reverse(f"screening:{name}", args=[pk]) for name in (
        "detail", "summary_json", "screen", "next_json", "recent_json", "prisma", "fulltext",
        "conflicts")]
    pages += [reverse("screening:export", args=[pk, fmt])
              for fmt in ("csv", "ris", "jsonl", "prisma")]
    pages += [reverse("screening:prisma_download", args=[pk, fmt])
              for fmt in ("svg", "png", "pdf")]
    pages += [reverse("screening:fulltext_record", args=[pk, record.pk]),
              reverse("screening:list"), reverse("projects:detail", args=[project_id])]
    api = [reverse(f"api:{name}", args=[pk]) for name in (
        "screening_detail", "screening_next", "screening_fulltext", "screening_conflicts")]
    api += [reverse("api:screening_export", args=[pk, fmt])
            for fmt in ("csv", "ris", "jsonl", "prisma", "prisma-svg", "prisma-png",
                        "prisma-pdf")]
    api += [reverse("api:screening_fulltext_record", args=[pk, record.pk]),
            reverse("api:screening_list"), reverse("api:project_activity", args=[project_id])]
    return pages + api


def _answers(client: Client, urls: list[str]) -> dict[str, tuple[int, bytes]]:
    out = {}
    for url in urls:
        answer = client.get(url)
        body = (b"".join(answer.streaming_content) if answer.streaming
                else answer.content)
        out[url] = (answer.status_code, _CSRF.sub(rb"\1\2-", body))
    return out


@pytest.fixture
def blind(team: Any) -> dict[str, Any]:  # noqa: F811
    """Rita has said yes to two records; Remy has read nothing yet."""
    session = dual_session_make(team, cited_dataset_make(team))
    desk.session_desk_update(user=team.maintainer, session=session, criteria="",
                             include_terms="", exclude_terms="", exclusion_reasons=REASON,
                             screeners=[])
    first, second, unread, _ = session.records.order_by("position")
    for record in (first, second):
        services.decision_record(user=team.reviewer, record=record,
                                 values={"oncological": "yes"}, note="rita-own-note")
    return {"session": session, "agreed": first, "disputed": second, "unread": unread}


def _events(team: Any, rows: dict[str, Any]) -> list[tuple[str, Any]]:  # noqa: F811
    def refreshed(record: Record) -> Record:
        return Record.objects.get(pk=record.pk)

    return [
        ("the other reviewer says yes", lambda: services.decision_record(
            user=team.reviewer2, record=rows["agreed"], values={"oncological": "yes"})),
        ("the other reviewer says no", lambda: services.decision_record(
            user=team.reviewer2, record=rows["disputed"], values={"oncological": "no"},
            reasons={"oncological": REASON})),
        ("the other reviewer reads a record she has not", lambda: services.decision_record(
            user=team.reviewer2, record=rows["unread"], values={"oncological": "yes"})),
        ("a maintainer resolves the conflict", lambda: services.conflict_resolve(
            user=team.maintainer, record=refreshed(rows["disputed"]), label="oncological",
            value="yes", note="resolved-note")),
        ("a maintainer marks a report not retrieved", lambda: fulltext.fulltext_not_retrieved(
            user=team.maintainer, record=refreshed(rows["agreed"]), reason="paywalled-xyz")),
        ("a maintainer attaches a report", lambda: fulltext.fulltext_report_attach(
            user=team.maintainer, record=refreshed(rows["disputed"]),
            uploaded_file=ContentFile(pdf_bytes(["The report of the disputed record."]),
                                      name="report.pdf"))),
        ("the other reviewer decides at full text", lambda: fulltext.fulltext_decision_record(
            user=team.reviewer2, record=refreshed(rows["disputed"]),
            values={"oncological": "no"}, reasons={"oncological": REASON})),
        ("a maintainer decides at full text", lambda: fulltext.fulltext_decision_record(
            user=team.maintainer, record=refreshed(rows["disputed"]),
            values={"oncological": "yes"})),
    ]


def test_a_blind_reviewer_reads_the_same_answers_whatever_the_others_do(
        team, blind) -> None:  # noqa: F811
    session = blind["session"]
    urls = _routes(session, blind["disputed"], team.project.pk)
    rita = client_of(team.reviewer)
    _answers(rita, urls)  # her first visit makes her personal project, in the project menu
    before = _answers(rita, urls)
    assert {url for url, (code, _) in before.items() if code != 200} == {
        reverse("screening:conflicts", args=[session.pk]),
        reverse("api:screening_conflicts", args=[session.pk]),
        reverse("screening:fulltext_record", args=[session.pk, blind["disputed"].pk]),
        reverse("api:screening_fulltext", args=[session.pk]),
        reverse("api:screening_fulltext_record", args=[session.pk, blind["disputed"].pk])}
    assert b"rita-own-note" in before[reverse("screening:export", args=[session.pk, "csv"])][1]
    for what, event in _events(team, blind):
        event()
        after = _answers(rita, urls)
        changed = [url for url in urls if after[url] != before[url]]
        assert changed == [], what
    # The events did happen: the maintainer reads them.
    mona = export_text(team.maintainer, session, "jsonl")
    assert "paywalled-xyz" not in mona  # a report's status is not a decision line
    assert '"source": "resolved"' in mona


def test_the_others_see_the_full_figures_and_the_reviewer_too_once_blinding_ends(
        team, blind) -> None:  # noqa: F811
    session = blind["session"]
    for _, event in _events(team, blind):
        event()
    activity = reverse("api:project_activity", args=[team.project.pk])
    prisma_json = reverse("api:screening_export", args=[session.pk, "prisma"])
    fulltext_list = reverse("api:screening_fulltext", args=[session.pk])

    def full(person: Any) -> None:
        client = client_of(person)
        counts = client.get(prisma_json).json()
        # Read twice: the agreed and the disputed records, both included at last.
        assert (counts["screened"], counts["reports_sought"]) == (2, 2), person
        assert counts["per_label"]["oncological"]["included"] == 2
        assert "hidden_while_blind" not in counts
        svg = client.get(reverse("screening:prisma_download", args=[session.pk, "svg"]))
        assert "Records screened (n = 2)" in svg.content.decode()
        head = export_text(person, session, "jsonl").splitlines()[0]
        assert '"percent_agreement": 50.0' in head
        assert len(client.get(fulltext_list).json()["results"]) == 2
        summaries = [row["summary"] for row in client.get(activity).json()["results"]]
        assert any("resolved oncological=yes" in s for s in summaries), person
        assert any("not retrieved: paywalled-xyz" in s for s in summaries), person

    full(team.maintainer)
    # A viewer reads the final figures while blind, not the resolutions (they tell of a
    # conflict, which a viewer does not see).
    vera = client_of(team.viewer)
    assert vera.get(prisma_json).json()["screened"] == 2
    assert not any("resolved" in row["summary"]
                   for row in vera.get(activity).json()["results"])
    services.session_blinding_end(user=team.owner, session=session)
    full(team.reviewer)
    full(team.viewer)


def test_a_blind_reviewer_is_told_the_full_text_opens_at_the_stop(team, blind) -> None:  # noqa: F811
    session = blind["session"]
    services.decision_record(user=team.reviewer2, record=blind["agreed"],
                             values={"oncological": "yes"})
    rita = client_of(team.reviewer)
    page = rita.get(reverse("screening:fulltext", args=[session.pk])).content.decode()
    assert 'id="fulltext-closed"' in page
    assert "once it is stopped" in page
    assert 'id="fulltext-table"' not in page
    for url in (reverse("api:screening_fulltext", args=[session.pk]),
                reverse("api:screening_fulltext_record", args=[session.pk,
                                                                blind["agreed"].pk])):
        refused = rita.get(url)
        assert refused.status_code == 403
        assert "once it is stopped" in refused.json()["detail"]
    prisma = rita.get(reverse("screening:prisma", args=[session.pk])).content.decode()
    assert 'id="prisma-hidden"' in prisma
    assert "Records screened (n hidden while blind)" in prisma
    services.session_stop(user=team.maintainer, session=session, force=True)
    listed = rita.get(reverse("api:screening_fulltext", args=[session.pk])).json()["results"]
    assert [row["record"] for row in listed] == [blind["agreed"].pk]
    assert listed[0]["final"] is None  # still blind at full text
    assert rita.get(reverse("api:screening_fulltext_record", args=[
        session.pk, blind["agreed"].pk])).status_code == 200
