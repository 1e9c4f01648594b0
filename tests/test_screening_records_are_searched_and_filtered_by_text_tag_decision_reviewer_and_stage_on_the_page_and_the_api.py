"""Search and filters (issue 50): a session's records are found by text (title, abstract,
authors, keywords), tag, decision, reviewer and stage, on the records page and over the API,
paged; each person filters within what they may see - a blind reviewer by their own decisions
only, never by another reviewer or by the stage."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from screening import tags
from screening.models import RecordTag
from tests.screening_review_support import (
    both_decide,
    cited_dataset_make,
    client_of,
    dual_session_make,
)
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def _api(person: Any) -> APIClient:
    api = APIClient()
    api.force_authenticate(person)
    return api


@pytest.fixture
def screened(team: Any) -> tuple[Any, Any, dict[str, Any]]:  # noqa: F811
    """A conflict (rita yes, remy no), an agreement (both yes, so at full text), two unread."""
    session = dual_session_make(team, cited_dataset_make(team))
    conflict = both_decide(team, session, "yes", "no")
    agreed = both_decide(team, session, "yes", "yes")
    return team, session, {"conflict": conflict, "agreed": agreed}


def _found(person: Any, session: Any, **filters: str) -> Any:
    return _api(person).get(reverse("api:screening_records", args=[session.pk]), filters)


def _ids(person: Any, session: Any, **filters: str) -> set[int]:
    answer = _found(person, session, **filters)
    assert answer.status_code == 200, answer.content
    return {row["id"] for row in answer.json()["results"]}


def _row_of(session: Any, text: str) -> int:
    return session.records.get(abstract__icontains=text).pk


def test_text_matches_the_abstract_and_the_authors_whatever_the_case(screened) -> None:
    crew, session, _ = screened
    assert _ids(crew.maintainer, session, q="STROKE") == {_row_of(session, "stroke")}
    assert _ids(crew.maintainer, session, q="okafor") == {_row_of(session, "cirrhosis")}
    assert _ids(crew.reviewer, session, q="no such words") == set()


def test_a_tag_filters_the_records_it_is_on(screened) -> None:
    crew, session, rows = screened
    tag = tags.tag_define(user=crew.maintainer, session=session, name="RCT")
    tags.record_tag_put(user=crew.reviewer, record=rows["agreed"], tag=tag)
    assert _ids(crew.reviewer, session, tag="rct") == {rows["agreed"].pk}
    unknown = _found(crew.reviewer, session, tag="cohort")
    assert unknown.status_code == 400
    assert "RCT" in unknown.json()["detail"]


def test_decision_reviewer_and_stage_for_someone_who_sees_everything(screened) -> None:
    crew, session, rows = screened
    conflict, agreed = rows["conflict"].pk, rows["agreed"].pk
    unread = set(session.records.values_list("pk", flat=True)) - {conflict, agreed}
    boss = crew.maintainer
    assert _ids(boss, session, decision="yes") == {conflict, agreed}
    assert _ids(boss, session, decision="no") == {conflict}
    assert _ids(boss, session, decision="undecided") == unread
    assert _ids(boss, session, decision="no", reviewer="rita") == set()
    assert _ids(boss, session, reviewer="remy", decision="no") == {conflict}
    assert _ids(boss, session, stage="full_text") == {agreed}
    assert _ids(boss, session, stage="title_abstract") == unread | {conflict}
    assert _ids(boss, session, stage="included") == set()
    listed = {r["id"]: r for r in _found(boss, session).json()["results"]}
    assert sorted(d["reviewer"] for d in listed[conflict]["decisions"]) == ["remy", "rita"]


def test_a_blind_reviewer_filters_by_their_own_decisions_only(screened) -> None:
    crew, session, rows = screened
    rita = crew.reviewer
    # Remy said no on the conflict: rita's "no" filter must not tell her so.
    assert _ids(rita, session, decision="no") == set()
    assert _ids(rita, session, decision="yes") == {rows["conflict"].pk, rows["agreed"].pk}
    listed = {r["id"]: r for r in _found(rita, session).json()["results"]}
    assert [d["reviewer"] for d in listed[rows["conflict"].pk]["decisions"]] == ["rita"]
    assert listed[rows["conflict"].pk]["final"] is None
    assert listed[rows["conflict"].pk]["state"] is None


def test_a_blind_reviewer_cannot_filter_by_another_reviewer_or_by_stage(screened) -> None:
    crew, session, _ = screened
    by_remy = _found(crew.reviewer, session, reviewer="remy")
    assert by_remy.status_code == 400
    assert "reviewer" in by_remy.json()["detail"]
    by_stage = _found(crew.reviewer, session, stage="full_text")
    assert by_stage.status_code == 400
    assert "stage" in by_stage.json()["detail"]
    page = client_of(crew.reviewer).get(reverse("screening:records", args=[session.pk]),
                                        {"reviewer": "remy"})
    assert page.status_code == 400
    assert "filter by reviewer" in page.content.decode()
    assert 'name="reviewer"' not in page.content.decode()  # not offered either


def test_a_viewer_of_a_blind_session_filters_by_the_final_values(screened) -> None:
    crew, session, rows = screened
    assert _ids(crew.viewer, session, decision="yes") == {rows["agreed"].pk}
    assert _found(crew.viewer, session, decision="unsure").status_code == 400


def test_a_bad_filter_is_refused_with_what_it_takes(screened) -> None:
    crew, session, _ = screened
    answer = _found(crew.maintainer, session, decision="maybe")
    assert answer.status_code == 400
    assert "undecided" in answer.json()["detail"]
    assert _found(crew.maintainer, session, stage="nowhere").status_code == 400


def test_the_page_filters_by_text_and_shows_title_tags_and_decisions(screened) -> None:
    crew, session, rows = screened
    tag = tags.tag_define(user=crew.maintainer, session=session, name="RCT")
    tags.record_tag_put(user=crew.reviewer, record=rows["conflict"], tag=tag)
    first_sentence = rows["conflict"].abstract.split(".")[0] + "."
    page = client_of(crew.maintainer).get(reverse("screening:records", args=[session.pk]),
                                          {"q": first_sentence.upper()})
    assert page.status_code == 200
    table = page.content.decode().split('id="records-table"')[1].split("</table>")[0]
    assert table.count("<tr data-record=") == 1
    assert first_sentence in table  # the title shown: the text's first sentence
    assert "RCT" in table
    assert "rita: oncological=yes" in table
    assert RecordTag.objects.count() == 1


def test_the_records_are_paged_on_the_page_and_the_api(team: Any) -> None:  # noqa: F811
    rows = [(str(32000000 + i), f"10.1000/p.{i}", "Author A", "2020", "BMJ",
             f"Paged record number {i}. It is about trials.") for i in range(60)]
    session = dual_session_make(team, cited_dataset_make(team, rows))
    url = reverse("api:screening_records", args=[session.pk])
    first = _api(team.maintainer).get(url, {"q": "trials"}).json()
    assert first["count"] == 60
    assert len(first["results"]) == 50
    assert first["next"]
    second = _api(team.maintainer).get(url, {"q": "trials", "page": 2}).json()
    assert len(second["results"]) == 10
    assert second["next"] is None
    assert not {r["id"] for r in first["results"]} & {r["id"] for r in second["results"]}
    page = client_of(team.maintainer).get(reverse("screening:records", args=[session.pk]),
                                          {"q": "trials", "page": 2})
    text = page.content.decode()
    assert text.count("<tr data-record=") == 10
    assert "Page 2 of 2" in text
    assert "q=trials&amp;page=1" in text


def _page_ids(person: Any, session: Any, **filters: str) -> set[int]:
    page = client_of(person).get(reverse("screening:records", args=[session.pk]), filters)
    assert page.status_code == 200, page.content[:500]
    table = page.content.decode().split('id="records-table"')[1].split("</table>")[0]
    return {int(part.split('"')[1]) for part in table.split("<tr data-record=")[1:]}


def test_the_page_filters_by_tag_decision_reviewer_and_stage_as_the_api_does(screened) -> None:
    crew, session, rows = screened
    tag = tags.tag_define(user=crew.maintainer, session=session, name="RCT")
    tags.record_tag_put(user=crew.reviewer, record=rows["conflict"], tag=tag)
    for filters in ({"tag": "RCT"}, {"decision": "no"}, {"decision": "undecided"},
                    {"reviewer": "remy", "decision": "yes"}, {"stage": "full_text"},
                    {"stage": "title_abstract", "decision": "yes"}):
        assert _page_ids(crew.maintainer, session, **filters) == _ids(
            crew.maintainer, session, **filters), filters
    assert _page_ids(crew.maintainer, session, tag="RCT") == {rows["conflict"].pk}
    assert _page_ids(crew.maintainer, session, stage="full_text") == {rows["agreed"].pk}
    assert _page_ids(crew.reviewer, session, decision="no") == set()
