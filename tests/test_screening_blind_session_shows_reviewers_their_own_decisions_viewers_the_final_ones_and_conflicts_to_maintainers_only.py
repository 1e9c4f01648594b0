"""Blind means blind (issue 35, item 1): while a session has two reviewers per record, a
reviewer sees only their own decisions and notes, a viewer only the final decisions, and
maintainers and owners everything - in the CSV, JSON Lines and RIS exports (page and API alike),
the conflicts API and the pages. The owner ends blinding, and that is logged."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from projects.models import Activity
from screening import selectors, services
from screening.models import ScreeningSession
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
FORMATS = ("csv", "jsonl", "ris")


@pytest.fixture
def screened(team: Any) -> tuple[Any, ScreeningSession, dict[str, Any]]:  # noqa: F811
    """A conflict (rita yes, remy no), an agreement (both yes), and a record only remy read."""
    session = dual_session_make(team, cited_dataset_make(team))
    conflict = both_decide(team, session, "yes", "no")
    agreed = both_decide(team, session, "yes", "yes")
    remy_only = next(r for r in session.records.all() if r.pk not in (conflict.pk, agreed.pk))
    services.decision_record(user=team.reviewer2, record=remy_only,
                             values={"oncological": "no"}, note="remy-alone-note")
    return team, session, {"conflict": conflict, "agreed": agreed, "remy_only": remy_only}


def _by_id(text: str) -> dict[int, dict[str, Any]]:
    return {line["record_id"]: line for line in jsonl_records(text)}


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_reviewer_exports_only_their_own_decisions_and_notes(screened, fmt: str) -> None:
    crew, session, _ = screened
    rita = export_text(crew.reviewer, session, fmt)
    assert "note-by-rita" in rita
    assert "note-by-remy" not in rita
    assert "remy-alone-note" not in rita
    assert "remy" not in rita  # not even the other reviewer's name
    remy = export_text(crew.reviewer2, session, fmt)
    assert "note-by-remy" in remy
    assert "remy-alone-note" in remy
    assert "note-by-rita" not in remy
    assert "rita" not in remy


def test_a_reviewer_does_not_learn_the_final_values_while_blind(screened) -> None:
    crew, session, rows = screened
    lines = _by_id(export_text(crew.reviewer, session, "jsonl"))
    agreed = lines[rows["agreed"].pk]["labels"]["oncological"]
    # Agreed yes - but a final value (or its absence on the conflict) would tell rita what
    # remy said, and she may still change her answer until the conflict is resolved.
    assert agreed["final"] == ""
    assert agreed["source"] == ""
    assert [d["value"] for d in agreed["decisions"]] == ["yes"]
    assert lines[rows["remy_only"].pk]["labels"]["oncological"]["decisions"] == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_viewer_exports_only_final_decisions(screened, fmt: str) -> None:
    crew, session, rows = screened
    services.conflict_resolve(user=crew.maintainer, record=rows["conflict"],
                              label="oncological", value="yes", note="resolver-note")
    text = export_text(crew.viewer, session, fmt)
    for secret in ("note-by-rita", "note-by-remy", "remy-alone-note", "rita", "remy",
                   "resolver-note"):
        assert secret not in text, secret
    if fmt == "jsonl":
        lines = _by_id(text)
        assert lines[rows["agreed"].pk]["labels"]["oncological"]["final"] == "yes"
        resolved = lines[rows["conflict"].pk]["labels"]["oncological"]
        assert (resolved["final"], resolved["source"]) == ("yes", "resolved")
        assert resolved["decisions"] == []
        assert lines[rows["remy_only"].pk]["labels"]["oncological"]["final"] == ""


@pytest.mark.parametrize("fmt", FORMATS)
def test_maintainers_and_owners_export_every_decision(screened, fmt: str) -> None:
    crew, session, _ = screened
    for person in (crew.maintainer, crew.owner):
        text = export_text(person, session, fmt)
        for note in ("note-by-rita", "note-by-remy", "remy-alone-note"):
            assert note in text, (person, note)


def test_only_maintainers_and_owners_see_the_conflicts_in_the_api(screened) -> None:
    crew, session, rows = screened
    url = reverse("api:screening_conflicts", args=[session.pk])
    for person in (crew.reviewer, crew.reviewer2, crew.viewer):
        api = APIClient()
        api.force_authenticate(person)
        refused = api.get(url)
        assert refused.status_code == 403, person
        assert "maintainer" in refused.json()["detail"]
    for person in (crew.maintainer, crew.owner):
        api = APIClient()
        api.force_authenticate(person)
        body = api.get(url).json()
        assert [c["record"]["id"] for c in body["results"]] == [rows["conflict"].pk]
        assert {d["note"] for d in body["results"][0]["decisions"]} == {"note-by-rita",
                                                                       "note-by-remy"}


def test_the_pages_show_conflicts_and_notes_to_maintainers_only(screened) -> None:
    crew, session, _ = screened
    detail = reverse("screening:detail", args=[session.pk])
    for person in (crew.reviewer, crew.viewer):
        page = client_of(person).get(detail).content.decode()
        assert 'id="conflicts-hidden"' in page
        assert "note-by-rita" not in page
        assert "note-by-remy" not in page
        assert client_of(person).get(reverse("screening:conflicts",
                                             args=[session.pk])).status_code == 403
    page = client_of(crew.maintainer).get(detail).content.decode()
    assert "note-by-rita" in page
    assert "note-by-remy" in page
    one_by_one = client_of(crew.maintainer).get(reverse("screening:conflicts",
                                                        args=[session.pk]))
    assert one_by_one.status_code == 200
    assert "note-by-remy" in one_by_one.content.decode()


def test_only_the_owner_ends_blinding_and_it_is_logged(screened) -> None:
    crew, session, _ = screened
    for person in (crew.maintainer, crew.reviewer):
        api = APIClient()
        api.force_authenticate(person)
        assert api.post(reverse("api:screening_unblind", args=[session.pk])).status_code == 403
        assert client_of(person).post(reverse("screening:unblind",
                                              args=[session.pk])).status_code == 403
    session.refresh_from_db()
    assert session.blind
    assert "note-by-remy" not in export_text(crew.reviewer, session, "csv")
    answer = client_of(crew.owner).post(reverse("screening:unblind", args=[session.pk]))
    assert answer.status_code == 302
    session.refresh_from_db()
    assert not session.blind
    log = Activity.objects.get(verb="screening_unblind")
    assert log.actor_id == crew.owner.pk
    assert "ended blinding" in log.summary
    # From now on the team sees everything, the conflicts included.
    assert "note-by-remy" in export_text(crew.reviewer, session, "csv")
    api = APIClient()
    api.force_authenticate(crew.reviewer)
    assert api.get(reverse("api:screening_conflicts", args=[session.pk])).status_code == 200


def test_a_single_reviewer_session_is_not_blind(team) -> None:  # noqa: F811
    session = services.session_create(user=team.maintainer, dataset=cited_dataset_make(team),
                                       name="Solo", labels=["oncological"])
    record = session.records.order_by("-priority").first()
    services.decision_record(user=team.reviewer, record=record,
                             values={"oncological": "yes"}, note="solo-note")
    assert "solo-note" in export_text(team.viewer, session, "csv")


def test_the_decide_api_does_not_tell_a_blind_reviewer_whether_the_other_agreed(
        team) -> None:  # noqa: F811
    session = dual_session_make(team, cited_dataset_make(team))
    record = both_decide(team, session, "yes", "yes")  # agreed: final yes, done
    api = APIClient()
    api.force_authenticate(team.reviewer)
    answer = api.post(reverse("api:screening_decide", args=[session.pk]), {
        "record": record.pk, "values": {"oncological": "yes"}}, format="json")
    assert answer.status_code == 200, answer.content
    assert answer.json() == {"record": record.pk, "final": None, "done": None}
    services.session_blinding_end(user=team.owner, session=session)
    answer = api.post(reverse("api:screening_decide", args=[session.pk]), {
        "record": record.pk, "values": {"oncological": "yes"}}, format="json")
    assert answer.json()["final"] == {"oncological": "yes"}


def test_a_blind_reviewers_counts_do_not_tell_whether_the_other_agreed(team) -> None:  # noqa: F811
    """Counts read just after one's own answer must not change with the other's: done (final
    values), conflicts, agreement and the stopping test would. A blind reviewer's page, poll,
    screen-page progress and API count the records they read themselves instead."""
    session = dual_session_make(team, cited_dataset_make(team))
    total = session.records.count()
    rita = client_of(team.reviewer)
    progress = []
    for remy_said in ("no", "yes"):  # the first a conflict, the second an agreement
        record = selectors.record_next(user=team.reviewer, session=session)
        services.decision_record(user=team.reviewer2, record=record,
                                 values={"oncological": remy_said})
        answer = rita.post(reverse("screening:decide_json", args=[session.pk]), json.dumps(
            {"record": record.pk, "values": {"oncological": "yes"}}),
            content_type="application/json")
        assert answer.status_code == 200, answer.content
        progress.append(answer.json()["progress"])
    # One more done after each, conflict or not.
    assert [(p["done"], p["remaining"]) for p in progress] == [(1, total - 1), (2, total - 2)]

    api = APIClient()
    api.force_authenticate(team.reviewer)
    for summary in (rita.get(reverse("screening:summary_json", args=[session.pk])).json(),
                    api.get(reverse("api:screening_detail", args=[session.pk])).json()):
        assert (summary["done"], summary["remaining"]) == (2, total - 2)
        assert summary["conflicts"] is None
        assert summary["stopping"] == []
        assert summary["stopping_panel"] is None
        [row] = summary["agreement"]
        assert row["n"] is None  # read twice: moves when the other reviewer reads
        assert (row["percent_agreement"], row["kappa"]) == (None, None)
    page = rita.get(reverse("screening:detail", args=[session.pk])).content.decode()
    assert 'id="stopping-hidden"' in page
    assert 'id="stopping-table"' not in page
    assert "50.0%" not in page

    # The maintainer, who resolves, sees the real figures; so does a viewer (final values).
    for person in (team.maintainer, team.viewer):
        summary = client_of(person).get(reverse("screening:summary_json",
                                                args=[session.pk])).json()
        assert summary["done"] == 1
        assert summary["agreement"][0]["percent_agreement"] == 50.0
        assert summary["stopping"][0]["label"] == "oncological"
    assert client_of(team.maintainer).get(reverse(
        "screening:summary_json", args=[session.pk])).json()["conflicts"] == 1
    # Ended blinding, rita sees them too.
    services.session_blinding_end(user=team.owner, session=session)
    assert rita.get(reverse("screening:summary_json",
                            args=[session.pk])).json()["conflicts"] == 1
