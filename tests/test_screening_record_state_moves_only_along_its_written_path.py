"""A record's state (screening/record_state.py) moves only along its written transitions: every
allowed move is taken, every other refused with a message naming both states, and a move that
leaves full-text work behind needs the maintainer's reason. Through the real services the
record walks its path: screening, conflict, excluded; screening, sought, retrieved, included
or excluded at full text; not retrieved; marked no by the stop. A reviewer's undo that would
take a record with full-text work back to title/abstract is refused (409) and changes nothing.
"""

from __future__ import annotations

import pytest

from screening import fulltext, record_state, services
from screening.errors import ScreeningConflict
from screening.models import Decision, RecordState, Stage
from tests.pdf_support import report_attach
from tests.screening_state_support import api_of, both_decide, dual_session
from tests.screening_support import team  # noqa: F401

S = RecordState
ALLOWED = [(source, target) for source, targets in record_state.TRANSITIONS.items()
           for target in targets]
REFUSED = [(source, target) for source in S.values for target in S.values
           if source != target and (source, target) not in ALLOWED]


@pytest.mark.parametrize(("source", "target"), ALLOWED)
def test_each_written_move_is_allowed(source, target) -> None:
    record_state.state_check(source=source, target=target)


@pytest.mark.parametrize(("source", "target"), REFUSED)
def test_every_other_move_is_refused_with_a_message(source, target) -> None:
    with pytest.raises(ScreeningConflict) as refused:
        record_state.state_check(source=source, target=target)
    message = str(refused.value)
    if source in record_state.WORK_STATES and target in (S.SCREENING, S.CONFLICT, S.EXCLUDED,
                                                         S.MARKED_NO):
        assert message.startswith("This record has full-text work (")
        assert "confirm_discard_fulltext=true and a reason" in message
        record_state.state_check(source=source, target=target, discard_reason="Amended")
    else:
        assert message == (f"A record cannot go from “{S(source).label}” to "
                           f"“{S(target).label}”.")


@pytest.mark.django_db
def test_records_walk_their_path_through_the_services(team) -> None:  # noqa: F811
    session = dual_session(team)
    first = session.records.get(position=0)
    assert first.state == S.SCREENING
    services.decision_record(user=team.reviewer, record=first, values={"oncological": "yes"})
    first.refresh_from_db()
    assert first.state == S.SCREENING  # one of two reviewers
    services.decision_record(user=team.reviewer2, record=first, values={"oncological": "no"})
    first.refresh_from_db()
    assert first.state == S.CONFLICT
    services.conflict_resolve(user=team.maintainer, record=first, label="oncological",
                              value="no")
    first.refresh_from_db()
    assert first.state == S.EXCLUDED

    yes = ({"oncological": "yes"}, {"oncological": "yes"})
    included, excluded, missing = (both_decide(team, session, yes, position=p)
                                   for p in (1, 2, 3))
    assert included.state == S.SOUGHT
    for record in (included, excluded):
        report_attach(user=team.reviewer, record=record)
        record.refresh_from_db()
        assert record.state == S.RETRIEVED
    for person in (team.reviewer, team.reviewer2):
        fulltext.fulltext_decision_record(user=person, record=included,
                                          values={"oncological": "yes"})
        fulltext.fulltext_decision_record(user=person, record=excluded,
                                          values={"oncological": "no"},
                                          reasons={"oncological": "Wrong outcome"})
    fulltext.fulltext_not_retrieved(user=team.reviewer, record=missing, reason="Paywalled")
    states = dict(session.records.filter(position__in=(1, 2, 3))
                  .values_list("position", "state"))
    assert states == {1: S.INCLUDED, 2: S.EXCLUDED_FULL_TEXT, 3: S.NOT_RETRIEVED}
    report_attach(user=team.reviewer, record=missing)  # found after all
    missing.refresh_from_db()
    assert missing.state == S.RETRIEVED

    # Rita's undo would take an included study back to title/abstract: refused, kept.
    undo = api_of(team.reviewer).post(f"/api/screening/{session.pk}/decide/", {
        "record": included.pk, "values": {"oncological": "no"}}, format="json")
    assert undo.status_code == 409
    assert "it was included at full text" in undo.json()["detail"]
    assert Decision.objects.get(record=included, reviewer=team.reviewer,
                                stage=Stage.TITLE_ABSTRACT).value == "yes"
    included.refresh_from_db()
    assert included.state == S.INCLUDED

    stopped = services.session_stop(user=team.maintainer, session=session, force=True)
    assert stopped.records.filter(state=S.MARKED_NO).count() == stopped.records.filter(
        done_phase="stop").count() > 0
    assert stopped.records.get(pk=included.pk).state == S.INCLUDED
