"""A reviewer sets a record aside to come back to it: a Skip row, never a decision.

The next-record query (selectors.record_next) hands out a skipped record only once the records
available to that reviewer are used up, the earliest skipped first; skipping it again puts it
at the back. A skip counts nowhere: not in done or progress, not in the stopping rule's sample
(whose prefix simply waits for the record, as for one called unsure). Deciding the record ends
the skip.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from projects import policy
from screening.errors import ScreeningError
from screening.models import Decision, Record, ScreeningSession, Skip, Stage


def record_skip(*, user: Any, record: Record) -> Skip:
    """Set the record aside for this reviewer (again: to the back of their skipped ones)."""
    session = record.session
    policy.require(user=user, action=policy.Action.SCREEN, obj=session)
    if session.phase == ScreeningSession.Phase.STOPPED:
        raise ScreeningError("This session has stopped; there is nothing left to skip.")
    if Decision.objects.filter(record=record, reviewer=user,
                               stage=Stage.TITLE_ABSTRACT).exists():
        raise ScreeningError("You have decided this record; change your decision instead.")
    if record.done:
        raise ScreeningError("This record is already settled; it needs no reading.")
    skip, _ = Skip.objects.update_or_create(record=record, reviewer=user,
                                            defaults={"skipped_at": timezone.now()})
    return skip


def skipped_records(*, user: Any, session: ScreeningSession) -> QuerySet[Record]:
    """This reviewer's skipped records still open to them, the earliest skipped first."""
    mine = Decision.objects.filter(record=OuterRef("pk"), reviewer=user,
                                   stage=Stage.TITLE_ABSTRACT)
    return (Record.objects.filter(session=session, done=False, skips__reviewer=user)
            .exclude(Exists(mine)).order_by("skips__skipped_at", "pk"))


def skipped_payload(*, user: Any, session: ScreeningSession) -> dict[str, Any]:
    records = list(skipped_records(user=user, session=session)[:50])
    count = skipped_records(user=user, session=session).count()
    return {"count": count,
            "said": (f"{count} skipped, they come back at the end" if count else ""),
            "records": [{"id": r.pk, "position": r.position + 1, "title": r.title[:200]}
                        for r in records]}
