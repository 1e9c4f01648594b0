"""A maintainer writes a session's eligibility criteria, highlighted terms, exclusion reasons
and screeners (the review desk page). The screen page shows the criteria and the terms; a "no"
may carry one of the session's reasons (optional at title/abstract, anything else refused); and
when screeners are chosen, another reviewer is refused at the page, the JSON endpoints and the
API, through projects.policy, with the policy's sentence."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from api.tokens import token_create
from projects import services as project_services
from projects.models import Activity
from projects.policy import Action, NotAssigned, NotCreator, can
from screening import desk, selectors, services
from screening.errors import ScreeningError
from screening.models import Decision
from tests.screening_support import team  # noqa: F401

pytestmark = pytest.mark.django_db


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_desk_sets_what_the_screen_page_shows_and_who_screens(team) -> None:  # noqa: F811
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="Desk",
                                      labels=["oncological"])
    mona = _client(team.maintainer)
    assert _client(team.reviewer).get(f"/screening/{session.pk}/desk/").status_code == 403
    answer = mona.post(f"/screening/{session.pk}/desk/", {
        "criteria": "Include: adults with a solid tumour.\nExclude: case reports.",
        "include_terms": "tumour, cohort\nTumour", "exclude_terms": "case report",
        "exclusion_reasons": "Wrong population\nWrong design\n\nWrong population",
        "screeners": [team.reviewer.pk]})
    assert answer.status_code == 302, answer.content.decode()[:2000]
    session.refresh_from_db()
    assert session.include_terms == ["tumour", "cohort"]
    assert session.exclude_terms == ["case report"]
    assert session.exclusion_reasons == ["Wrong population", "Wrong design"]
    assert list(session.screeners.all()) == [team.reviewer]
    assert Activity.objects.filter(verb="screening_desk", actor=team.maintainer).exists()

    page = _client(team.reviewer).get(f"/screening/{session.pk}/screen/").content.decode()
    assert "adults with a solid tumour." in page
    assert "Wrong design</option>" in page

    # Remy has the reviewer role but is not a screener: refused at every door, by the policy.
    assert not can(user=team.reviewer2, action=Action.SCREEN, obj=session)
    remy = _client(team.reviewer2)
    refused = remy.get(f"/screening/{session.pk}/screen/")
    assert refused.status_code == 403
    assert "creator chose" in refused.content.decode()
    for url in (f"/screening/{session.pk}/next.json", f"/screening/{session.pk}/recent.json"):
        refused = remy.get(url)
        assert refused.status_code == 403, url
        assert "creator chose" in refused.json()["detail"], url  # JSON, for the page to show
    record = selectors.record_next(user=team.reviewer, session=session)
    with pytest.raises(NotAssigned):
        services.decision_record(user=team.reviewer2, record=record,
                                 values={"oncological": "no"})
    token = token_create(user=team.reviewer2, name="t")[1]
    api = Client(HTTP_AUTHORIZATION=f"Token {token}")
    refused = api.post(f"/api/screening/{session.pk}/decide/", json.dumps(
        {"record": record.pk, "values": {"oncological": "no"}}), content_type="application/json")
    assert refused.status_code == 403
    assert "creator chose" in refused.json()["detail"]
    assert not Decision.objects.filter(reviewer=team.reviewer2).exists()
    # The session page offers Remy no Screen link; Rita has one.
    assert 'id="screen-link"' not in remy.get(f"/screening/{session.pk}/").content.decode()
    assert 'id="screen-link"' in _client(team.reviewer).get(
        f"/screening/{session.pk}/").content.decode()

    # A viewer cannot be made a screener: nobody could act for that name.
    with pytest.raises(ScreeningError, match="vera cannot screen"):
        desk.session_desk_update(user=team.maintainer, session=session, criteria="",
                                 include_terms="", exclude_terms="", exclusion_reasons="",
                                 screeners=[team.viewer])


def test_a_no_may_carry_one_of_the_sessions_reasons(team) -> None:  # noqa: F811
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="Why",
                                      labels=["oncological"])
    desk.session_desk_update(user=team.maintainer, session=session, criteria="",
                             include_terms="", exclude_terms="",
                             exclusion_reasons="Wrong population\nWrong design", screeners=[])
    rita = _client(team.reviewer)
    first = selectors.record_next(user=team.reviewer, session=session)

    def decide(record, value, reason):
        return rita.post(f"/screening/{session.pk}/decide.json", json.dumps(
            {"record": record.pk, "values": {"oncological": value},
             "reasons": {"oncological": reason}}), content_type="application/json")

    refused = decide(first, "no", "Not a reason of ours")
    assert refused.status_code == 400
    assert "not one of this session" in refused.json()["detail"]
    assert not Decision.objects.exists()
    assert decide(first, "no", "Wrong design").status_code == 200
    second = selectors.record_next(user=team.reviewer, session=session)
    assert decide(second, "yes", "Wrong design").status_code == 200  # dropped on a yes
    third = selectors.record_next(user=team.reviewer, session=session)
    assert decide(third, "no", "").status_code == 200  # optional at title/abstract
    reasons = dict(Decision.objects.values_list("record_id", "exclusion_reason"))
    assert reasons == {first.pk: "Wrong design", second.pk: "", third.pk: ""}
    payload = rita.get(f"/screening/{session.pk}/recent.json").json()["records"]
    assert payload[-1]["reasons"] == {"oncological": "Wrong design"}


def test_only_the_sessions_creator_or_an_owner_chooses_its_screeners(team) -> None:  # noqa: F811
    """Issue 35: "the session's creator chooses which members screen it". Another maintainer
    still writes the criteria, terms and reasons; an owner may choose too (a session whose
    creator has left is not stuck)."""
    max_ = get_user_model().objects.create_user("max", "max@example.org", "pw-123456")
    project_services.member_set(actor=team.owner, project=team.project, member=max_,
                                role="maintainer")
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="Mine",
                                      labels=["oncological"])
    desk.session_desk_update(user=team.maintainer, session=session, criteria="", screeners=[
        team.reviewer], include_terms="", exclude_terms="", exclusion_reasons="")
    assert can(user=team.maintainer, action=Action.CHOOSE_SCREENERS, obj=session)
    assert not can(user=max_, action=Action.CHOOSE_SCREENERS, obj=session)
    assert can(user=team.owner, action=Action.CHOOSE_SCREENERS, obj=session)

    # Max's desk shows the screeners as chosen, not to be changed; a post that ticks others
    # saves his criteria and leaves the screeners as they were.
    maxc = _client(max_)
    page = maxc.get(f"/screening/{session.pk}/desk/").content.decode()
    assert "Chosen by the session’s creator (mona) or an owner" in page
    boxes = re.findall(r'<input[^>]*name="screeners"[^>]*>', page)
    assert len(boxes) == 5  # every member who may screen: owner, maintainers, reviewers
    assert all("disabled" in box for box in boxes), boxes
    answer = maxc.post(f"/screening/{session.pk}/desk/", {
        "criteria": "Adults only.", "include_terms": "", "exclude_terms": "",
        "exclusion_reasons": "", "screeners": [team.reviewer2.pk]})
    assert answer.status_code == 302
    session.refresh_from_db()
    assert session.criteria == "Adults only."
    assert list(session.screeners.all()) == [team.reviewer]
    # The service refuses a change from him at any door, with the policy's sentence.
    with pytest.raises(NotCreator, match="for the member who created it"):
        desk.session_desk_update(user=max_, session=session, criteria="", include_terms="",
                                 exclude_terms="", exclusion_reasons="",
                                 screeners=[team.reviewer2])
    assert list(session.screeners.all()) == [team.reviewer]

    # The owner chooses, on the page (the boxes are live for the owner) as in the service.
    desk.session_desk_update(user=team.owner, session=session, criteria="", include_terms="",
                             exclude_terms="", exclusion_reasons="",
                             screeners=[team.reviewer, team.reviewer2])
    assert set(session.screeners.all()) == {team.reviewer, team.reviewer2}
    owner_page = _client(team.owner).get(f"/screening/{session.pk}/desk/").content.decode()
    boxes = re.findall(r'<input[^>]*name="screeners"[^>]*>', owner_page)
    assert len(boxes) == 5
    assert not any("disabled" in box for box in boxes), boxes
