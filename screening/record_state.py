"""A record's one path through both stages, written down with the moves it may make.

The state is derived from the record's rows (its final values, its report's status, its
full-text finals) and stored on the Record, so PRISMA counts one column and every write is
checked: a change the table below does not allow is refused with a message, never written.
Leaving full text once its report was retrieved, marked not retrieved or assessed is allowed
only with a reason (the maintainer's confirmation); that work is then kept, marked superseded.
"""

from __future__ import annotations

from typing import Any

from django.db import models
from django.utils import timezone

from screening import fulltext_selectors
from screening.errors import ScreeningConflict
from screening.models import FullTextReport, Record, RecordState, ScreeningSession

S = RecordState
# The title/abstract states a record can go back to while nothing was done at full text (an
# undo, or a maintainer's resolution changed).
_SCREENING = (S.SCREENING, S.CONFLICT, S.EXCLUDED, S.MARKED_NO)
TRANSITIONS: dict[str, tuple[str, ...]] = {
    S.SCREENING: (S.CONFLICT, S.EXCLUDED, S.MARKED_NO, S.SOUGHT),
    S.CONFLICT: (S.SCREENING, S.EXCLUDED, S.MARKED_NO, S.SOUGHT),
    S.EXCLUDED: (S.SCREENING, S.CONFLICT, S.SOUGHT),
    S.MARKED_NO: (S.CONFLICT, S.EXCLUDED, S.SOUGHT),
    S.SOUGHT: (*_SCREENING, S.RETRIEVED, S.NOT_RETRIEVED),
    S.RETRIEVED: (S.NOT_RETRIEVED, S.INCLUDED, S.EXCLUDED_FULL_TEXT),
    S.NOT_RETRIEVED: (S.RETRIEVED,),
    S.INCLUDED: (S.RETRIEVED, S.EXCLUDED_FULL_TEXT),
    S.EXCLUDED_FULL_TEXT: (S.RETRIEVED, S.INCLUDED),
}
FULL_TEXT_STATES = (S.SOUGHT, S.RETRIEVED, S.NOT_RETRIEVED, S.INCLUDED, S.EXCLUDED_FULL_TEXT)
# Full-text work a record would leave behind by going back to title/abstract.
WORK_STATES = (S.RETRIEVED, S.NOT_RETRIEVED, S.INCLUDED, S.EXCLUDED_FULL_TEXT)
ASSESSED_STATES = (S.INCLUDED, S.EXCLUDED_FULL_TEXT)

_WHY = {
    S.NOT_RETRIEVED: "its report was marked not retrieved",
    S.RETRIEVED: "its report was retrieved",
    S.INCLUDED: "it was included at full text",
    S.EXCLUDED_FULL_TEXT: "it was excluded at full text",
}


def state_derive(*, reached: list[str], done: bool, done_phase: str, read_by_all: bool,
                 report_status: str | None, fulltext_final: dict[str, str]) -> str:
    """The state a record's rows say it is in; `reached`: its labels at full text."""
    if reached:
        if report_status == FullTextReport.Status.NOT_RETRIEVED:
            return S.NOT_RETRIEVED
        if report_status != FullTextReport.Status.RETRIEVED:
            return S.SOUGHT
        if any(label not in fulltext_final for label in reached):
            return S.RETRIEVED
        return (S.INCLUDED if any(fulltext_final[label] == "yes" for label in reached)
                else S.EXCLUDED_FULL_TEXT)
    if done:
        return S.MARKED_NO if done_phase == "stop" else S.EXCLUDED
    return S.CONFLICT if read_by_all else S.SCREENING


def state_check(*, source: str, target: str, discard_reason: str = "") -> None:
    """Refuse (ScreeningConflict, a 409) a move the table does not allow; leaving full-text
    work behind is allowed only with the reason that confirms it."""
    if source == target or target in TRANSITIONS.get(source, ()):
        return
    if source in WORK_STATES and target in _SCREENING:
        if discard_reason:
            return
        raise ScreeningConflict(
            f"This record has full-text work ({_WHY[source]}): this change would take it out "
            "of the full-text stage, so it is refused. A maintainer may resolve it anyway: "
            "confirm with confirm_discard_fulltext=true and a reason (the full-text work is "
            "kept, marked superseded).")
    raise ScreeningConflict(f"A record cannot go from “{RecordState(source).label}” to "
                            f"“{RecordState(target).label}”.")


def record_state_sync(*, record: Record, session: ScreeningSession,
                      discard_reason: str = "") -> str:
    """Store the state the record's rows now say, if the move is allowed; the caller holds the
    record's lock, so the conditional update changes exactly its row."""
    report = FullTextReport.objects.filter(record_id=record.pk).first()
    target = state_derive(
        reached=fulltext_selectors.fulltext_labels(record=record, session=session),
        done=record.done, done_phase=record.done_phase,
        read_by_all=record.reviewer_count >= session.reviewers_per_record,
        report_status=report.status if report else None, fulltext_final=record.fulltext_final)
    source = record.state
    state_check(source=source, target=target, discard_reason=discard_reason)
    if source == target:
        return target
    if Record.objects.filter(pk=record.pk, state=source).update(state=target) != 1:
        raise ScreeningConflict("This record changed meanwhile; reload it and try again.")
    record.state = target
    if source in FULL_TEXT_STATES and target not in FULL_TEXT_STATES and report is not None:
        FullTextReport.objects.filter(pk=report.pk).update(
            superseded_at=timezone.now(), superseded_reason=discard_reason[:500])
    return target


def session_states_sync(*, session: ScreeningSession) -> int:
    """Store every record's state after a write over many (the stop); the moves are checked as
    one by one. The number of records whose state changed."""
    reached = {record.pk: labels
               for record, labels in fulltext_selectors.fulltext_records(session=session)}
    reports = dict(FullTextReport.objects.filter(record__session=session)
                   .values_list("record_id", "status"))
    changed = []
    for record in session.records.only("pk", "state", "done", "done_phase", "reviewer_count",
                                       "fulltext_final", "final"):
        target = state_derive(
            reached=reached.get(record.pk, []), done=record.done, done_phase=record.done_phase,
            read_by_all=record.reviewer_count >= session.reviewers_per_record,
            report_status=reports.get(record.pk), fulltext_final=record.fulltext_final)
        if target != record.state:
            state_check(source=record.state, target=target)
            record.state = target
            changed.append(record)
    Record.objects.bulk_update(changed, ["state"], batch_size=1000)
    return len(changed)


def state_counts(*, session: ScreeningSession) -> dict[str, int]:
    """Records per state (every state named, 0 where none)."""
    found = dict(session.records.values_list("state").annotate(n=models.Count("pk"))
                 .values_list("state", "n"))
    return {state: found.get(state, 0) for state in RecordState.values}


def state_payload(*, record: Record) -> dict[str, Any]:
    return {"state": record.state, "state_label": RecordState(record.state).label}
