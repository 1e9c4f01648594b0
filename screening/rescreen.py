"""Re-screening a chosen subset: a maintainer sends records back to title/abstract.

Their decisions and resolutions (both stages) move to SupersededDecision, kept as they were and
still in the exports; the records lose their final values and reviewers, so the next-record
queue hands them out again, and their state goes back to screening (record_state: full-text
work left behind is confirmed by the re-screen's reason, and its report marked superseded).
Refused once sampling began: the stopping rule's random sample must not change under it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import F

from projects import policy
from projects.services import activity_record
from screening import ranking, record_state
from screening.errors import ScreeningError
from screening.models import (
    Decision,
    Record,
    Rescreen,
    Resolution,
    ScreeningSession,
    SupersededDecision,
)
from screening.visibility import Sight

MAX_RECORDS = 20_000
REASON_MAX = 500


def _check(*, user: Any, session: ScreeningSession, reason: str, ids: list[int]) -> str:
    policy.require(user=user, action=policy.Action.RESCREEN, obj=session)
    if session.phase != ScreeningSession.Phase.RANKED:
        raise ScreeningError("Records can be sent back to screening only in the ranked phase: "
                             "once random sampling began, or the session stopped, the "
                             "stopping rule's sample would change under it.")
    reason = " ".join(str(reason or "").split())
    if not reason:
        raise ScreeningError("Say why these records are screened again (a reason).")
    if not ids:
        raise ScreeningError("Choose at least one record to screen again.")
    if len(ids) > MAX_RECORDS:
        raise ScreeningError(f"Re-screen at most {MAX_RECORDS} records at a time.")
    return reason[:REASON_MAX]


def _supersede(*, rescreen: Rescreen, record: Record) -> int:
    """Move the record's decisions and resolutions to SupersededDecision; how many moved."""
    kept = [SupersededDecision(
        rescreen=rescreen, record=record, kind=SupersededDecision.Kind.DECISION,
        person_id=d.reviewer_id, label=d.label, stage=d.stage, value=d.value,
        exclusion_reason=d.exclusion_reason, note=d.note, decided_at=d.decided_at)
        for d in Decision.objects.filter(record=record)]
    kept += [SupersededDecision(
        rescreen=rescreen, record=record, kind=SupersededDecision.Kind.RESOLUTION,
        person_id=r.resolver_id, label=r.label, stage=r.stage, value=r.value,
        exclusion_reason=r.exclusion_reason, note=r.note, decided_at=r.resolved_at)
        for r in Resolution.objects.filter(record=record)]
    SupersededDecision.objects.bulk_create(kept)
    Decision.objects.filter(record=record).delete()
    Resolution.objects.filter(record=record).delete()
    return len(kept)


def _record_reopen(*, rescreen: Rescreen, record: Record, session: ScreeningSession) -> bool:
    """The locked record back at title/abstract with nobody's answer; False if it had none."""
    if not _supersede(rescreen=rescreen, record=record):
        return False
    was_done = record.done
    record.final, record.fulltext_final, record.fulltext_reasons = {}, {}, {}
    record.done, record.done_at, record.done_phase, record.reviewer_count = False, None, "", 0
    record.save(update_fields=["final", "fulltext_final", "fulltext_reasons", "done",
                               "done_at", "done_phase", "reviewer_count"])
    if was_done:
        ScreeningSession.objects.filter(pk=session.pk).update(final_count=F("final_count") - 1)
    record_state.record_state_sync(record=record, session=session,
                                   discard_reason=f"re-screened: {rescreen.reason}")
    return True


def records_rescreen(*, user: Any, session: ScreeningSession, record_ids: Iterable[int],
                     reason: str) -> Rescreen:
    """Send the chosen records back to title/abstract (a maintainer's). Records nobody decided
    yet are left as they are; the count logged is of those sent back."""
    ids = sorted({int(pk) for pk in record_ids})
    reason = _check(user=user, session=session, reason=reason, ids=ids)
    with transaction.atomic():
        locked = ScreeningSession.objects.select_for_update().get(pk=session.pk)
        if locked.phase != ScreeningSession.Phase.RANKED:
            raise ScreeningError("This session left the ranked phase meanwhile: reload it.")
        rescreen = Rescreen.objects.create(session=locked, requested_by=user, reason=reason)
        records = Record.objects.select_for_update().filter(session=locked, pk__in=ids)
        sent = sum(_record_reopen(rescreen=rescreen, record=record, session=locked)
                   for record in records.order_by("pk"))
        if not sent:
            raise ScreeningError("None of the chosen records has a decision yet: nothing to "
                                 "screen again.")
        Rescreen.objects.filter(pk=rescreen.pk).update(record_count=sent)
        rescreen.record_count = sent
        activity_record(project=locked.project_id, actor=user, verb="screening_rescreen",
                        subject=locked, summary=f"{user.get_username()} sent {sent} record(s) "
                        f"of “{locked.name}” back to title/abstract screening: {reason}",
                        rescreen=rescreen.pk, records=sent)
    ranking.ranker_refresh_request(session_id=session.pk)
    return rescreen


def superseded_shown(*, session: ScreeningSession, sight: Sight) -> dict[int, list[dict]]:
    """record id -> its superseded decisions as `sight` may see them: a reviewer's as their
    decisions are shown, a resolution as the final values are (one query for the session)."""
    shown: dict[int, list[dict[str, Any]]] = defaultdict(list)
    rows = (SupersededDecision.objects.filter(record__session=session)
            .select_related("person", "rescreen").order_by("pk"))
    for row in rows:
        visible = (sight.finals_shown if row.kind == SupersededDecision.Kind.RESOLUTION
                   else sight.decision_shown(Decision(reviewer_id=row.person_id)))
        if visible:
            shown[row.record_id].append({
                "kind": row.kind, "person": row.person.get_username(), "label": row.label,
                "stage": row.stage, "value": row.value,
                "exclusion_reason": row.exclusion_reason,
                "note": row.note if row.kind == SupersededDecision.Kind.DECISION
                or sight.notes_shown else "",
                "decided_at": row.decided_at.isoformat(),
                "superseded_at": row.rescreen.created_at.isoformat(),
                "superseded_reason": row.rescreen.reason})
    return shown
