"""What the conflicts page holds in view besides the open conflicts: one title/abstract label of
a record a maintainer names (unsure from every reviewer and so at full text, or resolved
already), and, when a resolution was refused (409), what trying again takes: naming the
standing resolution it replaces, and confirming with a reason that full-text work is left."""

from __future__ import annotations

from typing import Any

from projects import policy
from screening import record_state
from screening.errors import ScreeningError
from screening.identity import record_identity
from screening.models import Decision, Record, Resolution, ScreeningSession, Stage
from screening.resolutions import resolution_facts


def conflict_of_record(*, user: Any, session: ScreeningSession, record: Record,
                       label: str) -> dict[str, Any]:
    """The record's title/abstract decisions on `label`, as a conflict card reads them, with
    the standing resolution (`standing`, None for none) and whether the record holds full-text
    work that a resolution taking it back to screening leaves behind (`work_at_full_text`)."""
    policy.require(user=user, action=policy.Action.RESOLVE_CONFLICTS, obj=session)
    if label not in session.labels:
        raise ScreeningError(f"Name a label of this session: {', '.join(session.labels)}.")
    record.refresh_from_db()
    decisions = (Decision.objects.filter(record=record, label=label, stage=Stage.TITLE_ABSTRACT)
                 .select_related("reviewer").order_by("reviewer_id"))
    standing = (Resolution.objects.select_related("resolver")
                .filter(record=record, label=label, stage=Stage.TITLE_ABSTRACT).first())
    return {"record": record, "label": label, "decisions": list(decisions),
            "stage": Stage.TITLE_ABSTRACT, "identity": record_identity(record=record),
            "standing": resolution_facts(resolution=standing) if standing else None,
            "work_at_full_text": record.state in record_state.WORK_STATES}
