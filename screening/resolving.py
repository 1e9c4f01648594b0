"""One door to resolve a conflict at either stage, for the conflicts page and the API: each
stage's own service does the write (title/abstract: services.conflict_resolve; full text:
fulltext.fulltext_resolve, where a "no" needs one of the session's exclusion reasons).

A second resolution of the same conflict names the one it `replaces` (its id), else it is
refused (ScreeningConflict, 409) with who resolved it, when and how."""

from __future__ import annotations

from typing import Any

from screening import fulltext, services
from screening.models import Record, Stage


def conflict_resolve_at(*, user: Any, record: Record, stage: str, label: str, value: str,
                        reason: str = "", note: str = "", replaces: str = "",
                        confirm_discard_fulltext: bool = False,
                        discard_reason: str = "") -> Record:
    """`reason`: the exclusion reason of a "no" at full text; `confirm_discard_fulltext` with
    `discard_reason`: a title/abstract resolution that leaves full-text work behind."""
    if stage == Stage.FULL_TEXT:
        return fulltext.fulltext_resolve(user=user, record=record, label=label, value=value,
                                         reason=reason, note=note, replaces=replaces)
    if stage != Stage.TITLE_ABSTRACT:
        raise services.ScreeningError("The stage is title_abstract or full_text.")
    return services.conflict_resolve(user=user, record=record, label=label, value=value,
                                     note=note, replaces=replaces,
                                     confirm_discard_fulltext=confirm_discard_fulltext,
                                     reason=discard_reason)
