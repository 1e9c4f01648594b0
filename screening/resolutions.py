"""A maintainer's resolution row, at either stage: the first one is written, a second one of the
same conflict only when it names the resolution it replaces, so two maintainers resolving at
once cannot both win and nobody's resolution is changed without the changer having seen it."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from screening.errors import ScreeningConflict, note_checked
from screening.models import Record, Resolution


def resolution_facts(*, resolution: Resolution) -> dict[str, Any]:
    return {"id": resolution.pk, "resolver": resolution.resolver.get_username(),
            "value": resolution.value, "exclusion_reason": resolution.exclusion_reason,
            "resolved_at": resolution.resolved_at.isoformat()}


def _replaces_matches(*, resolution: Resolution, replaces: str) -> bool:
    """`replaces` names the standing resolution: its id, or its resolved_at as answered."""
    return replaces in (str(resolution.pk), resolution.resolved_at.isoformat())


def resolution_save(*, record: Record, user: Any, label: str, stage: str, value: str,
                    note: str, exclusion_reason: str = "", discard_reason: str = "",
                    replaces: str = "") -> Resolution | None:
    """Write the resolution; the one it replaced (as it stood), or None for the first.

    The caller holds the record's row lock, so the read and the write below are one step for
    every other resolver of this record; the unique (record, label, stage) backs it.
    ScreeningConflict (409) names who resolved it, when and how, unless `replaces` matches.
    """
    fields = {"value": value, "resolver": user, "note": note_checked(note),
              "exclusion_reason": exclusion_reason, "discard_reason": discard_reason}
    standing = (Resolution.objects.select_related("resolver")
                .filter(record=record, label=label, stage=stage).first())
    if standing is None:
        try:
            with transaction.atomic():  # a savepoint: the IntegrityError keeps the outer usable
                Resolution.objects.create(record=record, label=label, stage=stage, **fields)
        except IntegrityError:
            raise ScreeningConflict("Another maintainer resolved this conflict a moment ago; "
                                    "reload it to see their resolution.") from None
        return None
    facts = resolution_facts(resolution=standing)
    if not replaces or not _replaces_matches(resolution=standing, replaces=str(replaces)):
        raise ScreeningConflict(
            f"{facts['resolver']} already resolved {label} = {standing.value} for this record "
            f"at {facts['resolved_at']}. To change it, send replaces={standing.pk} (the "
            "resolution you replace).", facts={"resolution": facts})
    for name, new in fields.items():
        setattr(standing, name, new)
    standing.save()
    return Resolution(pk=facts["id"], record=record, label=label, stage=stage,
                      value=facts["value"], exclusion_reason=facts["exclusion_reason"])
