"""Prior knowledge (issue 51): a maintainer marks records known relevant or irrelevant for a
label - by a search, record ids, PMIDs or a file of included studies - on the session page and
over the API. Priors train the first ranking, are named in the exports, are never counted as
screened (progress, the stopping rule's pool), and a removal is logged; a bad request changes
nothing and says why."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from projects.models import Activity
from screening import ranking, selectors, services
from screening.models import Prior, RecordState
from tests.priors_support import api_of, record_of, titled_session_make
from tests.screening_review_support import client_of, export_text, jsonl_records
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def _post(person: Any, session: Any, body: dict[str, Any]) -> Any:
    return api_of(person).post(reverse("api:screening_priors", args=[session.pk]), body,
                               format="json")


def test_priors_by_pmids_and_ids_settle_the_label_without_counting_as_screened(team) -> None:  # noqa: F811
    session = titled_session_make(team)
    onc, eczema = record_of(session, "31000001"), record_of(session, "31000006")
    answer = _post(team.maintainer, session, {"label": "oncological", "value": "yes",
                                              "pmids": ["031000001", "99999999"]})
    assert answer.status_code == 201, answer.content
    assert answer.json()["set"] == [onc.pk]
    assert answer.json()["unmatched"] == ["99999999"]
    answer = _post(team.maintainer, session, {"label": "oncological", "value": "no",
                                              "record_ids": [eczema.pk]})
    assert answer.status_code == 201, answer.content
    onc.refresh_from_db()
    eczema.refresh_from_db()
    assert (onc.final, onc.done, onc.done_phase, onc.state) == (
        {"oncological": "yes"}, True, "prior", RecordState.SOUGHT)
    assert (eczema.done_phase, eczema.state) == ("prior", RecordState.EXCLUDED)
    summary = selectors.session_summary(session=session)
    assert (summary["done"], summary["priors"], summary["remaining"]) == (0, 2, 4)
    # The stopping rule: the pool holds only the records not known; the prior yes is found.
    state = summary["stopping"][0]
    assert (state["pool"], state["r_al"]) == (4, 1)
    served = set()
    while (record := selectors.record_next(user=team.reviewer, session=session)) is not None:
        served.add(record.pk)
        services.decision_record(user=team.reviewer, record=record, values={"oncological": "no"})
    assert len(served) == 4
    assert not served & {onc.pk, eczema.pk}
    session.refresh_from_db()
    assert session.final_count == 4
    listed = api_of(team.maintainer).get(reverse("api:screening_priors", args=[session.pk]))
    assert [p["shown"] for p in listed.json()["results"]] == [
        "prior knowledge (by mona, PMIDs)", "prior knowledge (by mona, record ids)"]
    exported = jsonl_records(export_text(team.maintainer, session, "jsonl"))
    said = next(str(row) for row in exported if "Chemotherapy" in str(row))
    assert "prior knowledge (by mona, PMIDs)" in said
    assert "prior knowledge (by mona, record ids)" in export_text(team.maintainer, session, "csv")


def test_a_prior_yes_and_no_are_enough_for_the_first_ranking(team) -> None:  # noqa: F811
    session = titled_session_make(team)
    assert _post(team.maintainer, session, {"label": "oncological", "value": "yes",
                                            "query": "cancer"}).status_code == 201
    assert _post(team.maintainer, session, {"label": "oncological", "value": "no",
                                            "query": "eczema"}).status_code == 201
    assert Prior.objects.filter(record__session=session).count() == 3
    ranking.ranker_refresh(session_id=session.pk)
    session.refresh_from_db()
    assert session.ranker_error == ""
    unread = list(session.records.filter(done=False))
    assert len(unread) == 3
    assert all("oncological" in record.scores for record in unread)


def test_priors_from_a_file_match_by_pmid_doi_then_title_on_the_page(team) -> None:  # noqa: F811
    session = titled_session_make(team)
    studies = ("pmid,doi,title\n31000003,,Some other title\n,10.1000/CARD.2,Another\n"
               ",,\"Radiotherapy of Breast Cancer.\"\n,,A study the collection lacks\n")
    page = client_of(team.maintainer).post(reverse("screening:priors", args=[session.pk]), {
        "label": "oncological", "value": "no", "query": "", "record_ids": "", "pmids": "",
        "file": SimpleUploadedFile("included.csv", studies.encode())}, follow=True)
    assert page.status_code == 200
    text = page.content.decode()
    assert "3 record(s) marked known irrelevant for oncological" in text
    assert "A study the collection lacks" in text
    marked = {p.record.identifiers["pmid"] for p in Prior.objects.filter(record__session=session)}
    assert marked == {"31000003", "31000002", "31000005"}
    assert "prior knowledge (by mona, file included.csv)" in text
    detail = client_of(team.maintainer).get(reverse("screening:detail", args=[session.pk]))
    assert 'id="priors"' in detail.content.decode()
    assert 'id="priors"' not in client_of(team.reviewer).get(
        reverse("screening:detail", args=[session.pk])).content.decode()


def test_bad_requests_change_nothing_and_a_removal_is_logged(team) -> None:  # noqa: F811
    session = titled_session_make(team)
    for body in ({"label": "oncological", "value": "yes"},
                 {"label": "oncological", "value": "yes", "pmids": ["1"], "query": "x"},
                 {"label": "nope", "value": "yes", "pmids": ["31000001"]},
                 {"label": "oncological", "value": "unsure", "pmids": ["31000001"]},
                 {"label": "oncological", "value": "yes", "record_ids": ["abc"]}):
        answer = _post(team.maintainer, session, body)
        assert answer.status_code == 400, (body, answer.content)
        assert answer.json()["detail"]
    assert _post(team.reviewer, session, {"label": "oncological", "value": "yes",
                                          "pmids": ["31000001"]}).status_code == 403
    page = client_of(team.maintainer).post(reverse("screening:priors", args=[session.pk]), {
        "label": "oncological", "value": "yes", "query": "", "pmids": "", "record_ids": ""})
    assert page.status_code == 400
    assert b"Choose the records one way" in page.content
    assert not Prior.objects.exists()
    # A record someone already decided keeps its decision.
    first = selectors.record_next(user=team.reviewer, session=session)
    services.decision_record(user=team.reviewer, record=first, values={"oncological": "no"})
    answer = _post(team.maintainer, session, {"label": "oncological", "value": "yes",
                                              "record_ids": [first.pk]})
    assert answer.status_code == 400  # nothing left to mark
    answer = _post(team.maintainer, session, {"label": "oncological", "value": "yes",
                                              "pmids": ["31000001"]})
    prior = Prior.objects.get()
    removed = api_of(team.maintainer).delete(reverse("api:screening_prior",
                                                     args=[session.pk, prior.pk]))
    assert removed.status_code == 200, removed.content
    record = prior.record
    record.refresh_from_db()
    assert (record.done, record.final, record.state) == (False, {}, RecordState.SCREENING)
    assert Activity.objects.filter(verb="screening_prior_remove").count() == 1


def test_priors_wait_for_no_sample_and_never_drop_full_text_work(team) -> None:  # noqa: F811
    from tests.pdf_support import report_attach

    session = titled_session_make(team)
    assert _post(team.maintainer, session, {"label": "oncological", "value": "yes",
                                            "pmids": ["31000001"]}).status_code == 201
    prior = Prior.objects.get()
    report_attach(user=team.maintainer, record=prior.record)
    prior.record.refresh_from_db()
    assert prior.record.state == RecordState.RETRIEVED
    removed = api_of(team.maintainer).delete(reverse("api:screening_prior",
                                                     args=[session.pk, prior.pk]))
    assert removed.status_code == 409, removed.content
    assert "full-text work" in removed.json()["detail"]
    assert Prior.objects.filter(pk=prior.pk).exists()
    services.sampling_start(user=team.maintainer, session=session)
    session.refresh_from_db()
    assert session.sampling_pool == 5  # the prior's record is not in the random sample's pool
    answer = _post(team.maintainer, session, {"label": "oncological", "value": "no",
                                              "pmids": ["31000002"]})
    assert answer.status_code == 400
    assert "ranked phase only" in answer.json()["detail"]
