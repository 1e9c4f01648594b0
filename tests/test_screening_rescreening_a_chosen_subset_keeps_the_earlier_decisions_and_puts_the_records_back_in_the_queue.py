"""Re-screening a chosen subset (issue 50): a maintainer sends records - by ids or by the
current filter - back to title/abstract. Their earlier decisions and resolutions are kept,
superseded, and still read in the exports; the records become undecided and the next-record
queue hands them out again; the log says how many and why. A reviewer may not; a bad request
changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from projects.models import Activity
from screening import fulltext, selectors, services
from screening.models import (
    Decision,
    FullTextReport,
    RecordState,
    ScreeningSession,
    SupersededDecision,
)
from tests.pdf_support import report_attach
from tests.screening_review_support import (
    both_decide,
    cited_dataset_make,
    client_of,
    dual_session_make,
    export_text,
    jsonl_records,
)
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def _api(person: Any) -> APIClient:
    api = APIClient()
    api.force_authenticate(person)
    return api


@pytest.fixture
def screened(team: Any) -> tuple[Any, Any, dict[str, Any]]:  # noqa: F811
    """A conflict resolved yes by the maintainer and an agreed no."""
    session = dual_session_make(team, cited_dataset_make(team))
    conflict = both_decide(team, session, "yes", "no")
    services.conflict_resolve(user=team.maintainer, record=conflict, label="oncological",
                              value="yes", note="resolver-note")
    excluded = both_decide(team, session, "no", "no")
    return team, session, {"conflict": conflict, "excluded": excluded}


def _rescreen(person: Any, session: Any, body: dict[str, Any]) -> Any:
    return _api(person).post(reverse("api:screening_rescreen", args=[session.pk]), body,
                             format="json")


def test_rescreened_records_keep_their_decisions_and_come_back_to_the_queue(screened) -> None:
    crew, session, rows = screened
    excluded = rows["excluded"]
    assert excluded.state == RecordState.EXCLUDED
    session.refresh_from_db()
    before = session.final_count
    assert before == 2
    answer = _rescreen(crew.maintainer, session, {"records": [excluded.pk],
                                                  "reason": "Criteria widened to adults"})
    assert answer.status_code == 200, answer.content
    assert answer.json()["records"] == 1
    excluded.refresh_from_db()
    assert (excluded.final, excluded.done, excluded.reviewer_count, excluded.state) == (
        {}, False, 0, RecordState.SCREENING)
    session.refresh_from_db()
    assert session.final_count == before - 1
    kept = SupersededDecision.objects.filter(record=excluded)
    assert sorted((k.person.username, k.value) for k in kept) == [("remy", "no"), ("rita", "no")]
    assert not Decision.objects.filter(record=excluded).exists()
    # Both reviewers get it again, and may decide it anew.
    queue = {selectors.record_next(user=crew.reviewer, session=session).pk}
    while True:
        record = selectors.record_next(user=crew.reviewer, session=session, exclude=queue)
        if record is None:
            break
        queue.add(record.pk)
    assert excluded.pk in queue
    services.decision_record(user=crew.reviewer, record=excluded, values={"oncological": "yes"})
    assert Decision.objects.get(record=excluded).value == "yes"


def test_the_earlier_decisions_are_read_in_the_exports(screened) -> None:
    crew, session, rows = screened
    conflict = rows["conflict"]
    assert _rescreen(crew.maintainer, session, {"records": [conflict.pk],
                                                "reason": "Protocol v2"}).status_code == 200
    boss = {line["record_id"]: line for line in
            jsonl_records(export_text(crew.maintainer, session, "jsonl"))}
    earlier = boss[conflict.pk]["superseded"]
    assert sorted((e["kind"], e["person"], e["value"]) for e in earlier) == [
        ("decision", "remy", "no"), ("decision", "rita", "yes"),
        ("resolution", "mona", "yes")]
    assert {e["superseded_reason"] for e in earlier} == {"Protocol v2"}
    assert boss[conflict.pk]["labels"]["oncological"]["decisions"] == []
    csv_text = export_text(crew.maintainer, session, "csv")
    assert "superseded by a re-screen" in csv_text
    assert "Protocol v2" in csv_text
    # A blind reviewer reads their own earlier decision only, and no resolution.
    rita = {line["record_id"]: line for line in
            jsonl_records(export_text(crew.reviewer, session, "jsonl"))}
    assert [(e["person"], e["value"]) for e in rita[conflict.pk]["superseded"]] == [
        ("rita", "yes")]


def test_the_current_filter_chooses_the_records_and_the_log_says_how_many_and_why(
        screened) -> None:
    crew, session, rows = screened
    url = reverse("screening:records", args=[session.pk]) + "?decision=no&reviewer=rita"
    page = client_of(crew.maintainer).post(url, {"action": "rescreen", "scope": "filter",
                                                 "reason": "Second look at rita's no"})
    assert page.status_code == 302
    assert page["Location"].endswith("?decision=no&reviewer=rita")
    rows["excluded"].refresh_from_db()
    rows["conflict"].refresh_from_db()
    assert rows["excluded"].state == RecordState.SCREENING
    assert rows["conflict"].done  # rita said yes there: not chosen
    line = Activity.objects.get(verb="screening_rescreen")
    assert "1 record(s)" in line.summary
    assert "Second look at rita's no" in line.summary


def test_a_reviewer_may_not_and_a_bad_request_changes_nothing(screened) -> None:
    crew, session, rows = screened
    ids = [rows["excluded"].pk]
    refused = _rescreen(crew.reviewer, session, {"records": ids, "reason": "mine"})
    assert refused.status_code == 403
    no_reason = _rescreen(crew.maintainer, session, {"records": ids, "reason": " "})
    assert no_reason.status_code == 400
    assert "reason" in no_reason.json()["detail"]
    nothing = _rescreen(crew.maintainer, session, {"reason": "x"})
    assert nothing.status_code == 400
    assert "Choose the records" in nothing.json()["detail"]
    page = client_of(crew.maintainer).post(
        reverse("screening:records", args=[session.pk]),
        {"action": "rescreen", "scope": "selected", "reason": "typed reason kept"})
    assert page.status_code == 400
    assert "typed reason kept" in page.content.decode()
    assert not SupersededDecision.objects.exists()
    assert Decision.objects.filter(record=rows["excluded"]).count() == 2


def test_re_screening_is_refused_once_sampling_began(screened) -> None:
    crew, session, rows = screened
    services.sampling_start(user=crew.maintainer, session=session)
    answer = _rescreen(crew.maintainer, session, {"records": [rows["excluded"].pk],
                                                  "reason": "late"})
    assert answer.status_code == 400
    assert "ranked phase" in answer.json()["detail"]
    assert ScreeningSession.objects.get(pk=session.pk).phase == "sampling"
    assert Decision.objects.filter(record=rows["excluded"]).count() == 2


def test_a_record_included_at_full_text_goes_back_with_its_full_text_work_kept(
        team: Any) -> None:  # noqa: F811
    session = dual_session_make(team, cited_dataset_make(team))
    services.session_blinding_end(user=team.owner, session=session)
    record = both_decide(team, session, "yes", "yes")
    report_attach(user=team.maintainer, record=record)
    for person in (team.reviewer, team.reviewer2):
        fulltext.fulltext_decision_record(user=person, record=record,
                                          values={"oncological": "yes"})
    record.refresh_from_db()
    assert record.state == RecordState.INCLUDED
    answer = _rescreen(team.maintainer, session, {"filter": {"stage": "included"},
                                                  "reason": "Wrong population"})
    assert answer.status_code == 200, answer.content
    record.refresh_from_db()
    assert (record.state, record.fulltext_final) == (RecordState.SCREENING, {})
    assert sorted(SupersededDecision.objects.filter(record=record)
                  .values_list("stage", flat=True)) == ["full_text"] * 2 + ["title_abstract"] * 2
    report = FullTextReport.objects.get(record=record)
    assert report.superseded_at is not None
    assert "Wrong population" in report.superseded_reason
