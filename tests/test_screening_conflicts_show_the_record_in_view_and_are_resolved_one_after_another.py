"""Adjudication with the record in view (issue 35, item 2): each conflict carries its record's
title (or, on a collection with no title, the text's first sentence), abstract, identifiers
(record id, PMID, DOI), citation and source link, and both decisions with notes; the API gives
every result a `record` object; the conflicts page resolves them one after the other."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from screening import fulltext, selectors, services
from screening.models import ScreeningSession
from tests.pdf_support import report_attach
from tests.screening_review_support import (
    CITED_ROWS,
    both_decide,
    cited_dataset_make,
    client_of,
    dual_session_make,
)
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def _row_of(record: Any) -> tuple[str, ...]:
    return next(row for row in CITED_ROWS if row[5] == record.abstract)


def test_the_api_gives_each_conflict_its_record(team) -> None:  # noqa: F811
    session = dual_session_make(team, cited_dataset_make(team))
    record = both_decide(team, session, "yes", "no")
    pmid, doi, authors, year, journal, abstract = _row_of(record)
    api = APIClient()
    api.force_authenticate(team.maintainer)
    body = api.get(reverse("api:screening_conflicts", args=[session.pk])).json()
    [conflict] = body["results"]
    shown = conflict["record"]
    # No title column: the first sentence stands in, never an empty title.
    assert shown["title"] == abstract.split(". ")[0] + "."
    assert shown["abstract"] == abstract
    assert shown["identifiers"] == {"record_id": record.pk, "pmid": pmid, "doi": doi}
    assert (shown["year"], shown["journal"]) == (year, journal)
    assert shown["authors"] == authors.split(", ")
    assert shown["source_url"] == f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/"
    assert conflict["label"] == "oncological"
    assert {(d["reviewer"], d["value"], d["note"]) for d in conflict["decisions"]} == {
        ("rita", "yes", "note-by-rita"), ("remy", "no", "note-by-remy")}


def test_the_session_page_shows_each_conflicts_record(team) -> None:  # noqa: F811
    session = dual_session_make(team, cited_dataset_make(team))
    record = both_decide(team, session, "yes", "no")
    pmid, doi, _authors, _year, journal, abstract = _row_of(record)
    page = client_of(team.maintainer).get(reverse("screening:detail", args=[session.pk]))
    html = page.content.decode()
    for shown in (abstract.split(". ")[0], pmid, doi, journal, f"Record {record.pk}",
                  f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/", "note-by-rita", "note-by-remy"):
        assert shown in html, shown


def test_a_maintainer_resolves_conflicts_one_after_another(team) -> None:  # noqa: F811
    session = dual_session_make(team, cited_dataset_make(team))
    # The conflicts come in the records' order, not the order they arose in.
    first, second = sorted([both_decide(team, session, "yes", "no"),
                            both_decide(team, session, "no", "yes")], key=lambda r: r.position)
    boss = client_of(team.maintainer)
    url = reverse("screening:conflicts", args=[session.pk])
    page = boss.get(url).content.decode()
    assert "Conflict 1 of 2" in page
    assert f'data-record="{first.pk}"' in page
    assert 'id="resolve-yes"' in page
    assert 'id="resolve-no"' in page
    assert "js/conflicts.js" in page  # the y / n / s keys
    answer = boss.post(url, data={"record": first.pk, "label": "oncological", "value": "no",
                                  "note": "not a tumour", "skip": 0})
    assert answer.status_code == 302
    first.refresh_from_db()
    assert first.final == {"oncological": "no"}
    page = boss.get(answer.url).content.decode()
    assert "Conflict 1 of 1" in page
    assert f'data-record="{second.pk}"' in page
    boss.post(url, data={"record": second.pk, "label": "oncological", "value": "yes",
                         "skip": 0})
    assert 'id="no-conflicts"' in boss.get(url).content.decode()


def test_skip_moves_to_the_next_conflict_without_resolving(team) -> None:  # noqa: F811
    session = dual_session_make(team, cited_dataset_make(team))
    _, second = sorted([both_decide(team, session, "yes", "no"),
                        both_decide(team, session, "no", "yes")], key=lambda r: r.position)
    page = client_of(team.maintainer).get(
        reverse("screening:conflicts", args=[session.pk]) + "?skip=1").content.decode()
    assert "Conflict 2 of 2" in page
    assert f'data-record="{second.pk}"' in page


def test_a_reviewer_cannot_resolve_from_the_conflicts_page(team) -> None:  # noqa: F811
    session = dual_session_make(team, cited_dataset_make(team))
    services.session_blinding_end(user=team.owner, session=session)
    record = both_decide(team, session, "yes", "no")
    rita = client_of(team.reviewer)
    url = reverse("screening:conflicts", args=[session.pk])
    page = rita.get(url).content.decode()  # unblinded: she sees it, without the buttons
    assert "note-by-remy" in page
    assert 'id="resolve-yes"' not in page
    rita.post(url, data={"record": record.pk, "label": "oncological", "value": "yes"})
    record.refresh_from_db()
    assert record.final == {}


def _fulltext_conflict(team: Any) -> tuple[Any, Any]:  # noqa: F811
    """Both include at title/abstract; at full text rita includes, remy excludes."""
    session = dual_session_make(team, cited_dataset_make(team))
    ScreeningSession.objects.filter(pk=session.pk).update(exclusion_reasons=["Wrong dose"])
    record = both_decide(team, session, "yes", "yes")
    record = session.records.select_related("session").get(pk=record.pk)
    report_attach(user=team.reviewer, record=record)  # decided on a retrieved report only
    fulltext.fulltext_decision_record(user=team.reviewer, record=record,
                                      values={"oncological": "yes"}, note="ft-rita")
    fulltext.fulltext_decision_record(user=team.reviewer2, record=record,
                                      values={"oncological": "no"},
                                      reasons={"oncological": "Wrong dose"}, note="ft-remy")
    return session, record


def test_a_full_text_conflict_is_listed_with_its_stage_and_reasons(team) -> None:  # noqa: F811
    session, record = _fulltext_conflict(team)
    api = APIClient()
    api.force_authenticate(team.maintainer)
    [conflict] = api.get(reverse("api:screening_conflicts", args=[session.pk])).json()["results"]
    assert (conflict["record"]["id"], conflict["stage"]) == (record.pk, "full_text")
    assert {(d["reviewer"], d["exclusion_reason"]) for d in conflict["decisions"]} == {
        ("rita", ""), ("remy", "Wrong dose")}
    reviewer = APIClient()
    reviewer.force_authenticate(team.reviewer)
    assert reviewer.get(reverse("api:screening_conflicts",
                                args=[session.pk])).status_code == 403


def test_a_full_text_conflict_is_resolved_with_a_required_reason(team) -> None:  # noqa: F811
    session, record = _fulltext_conflict(team)
    boss = client_of(team.maintainer)
    url = reverse("screening:conflicts", args=[session.pk])
    page = boss.get(url).content.decode()
    assert 'id="resolve-reason"' in page
    assert "ft-remy" in page
    boss.post(url, data={"record": record.pk, "label": "oncological", "value": "no",
                         "stage": "full_text"})
    record.refresh_from_db()
    assert record.fulltext_final == {}  # refused: an exclusion at full text needs its reason
    api = APIClient()
    api.force_authenticate(team.maintainer)
    answer = api.post(reverse("api:screening_conflicts", args=[session.pk]), {
        "record": record.pk, "label": "oncological", "value": "no", "stage": "full_text",
        "exclusion_reason": "Wrong dose"}, format="json")
    assert answer.status_code == 200, answer.content
    record.refresh_from_db()
    assert record.fulltext_final == {"oncological": "no"}
    assert record.fulltext_reasons == {"oncological": "Wrong dose"}
    assert api.get(reverse("api:screening_conflicts", args=[session.pk])).json()["count"] == 0


def test_the_session_summary_counts_full_text_conflicts_and_kappa_reads_title_abstract_only(
        team) -> None:  # noqa: F811
    session, _record = _fulltext_conflict(team)
    summary = selectors.session_summary(session=session)
    assert summary["conflicts"] == 1  # the page re-reads its list when this number changes
    [row] = summary["agreement"]
    assert (row["n"], row["percent_agreement"]) == (1, 100.0)  # both said yes at title/abstract
