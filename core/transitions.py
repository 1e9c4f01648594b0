"""Status changes as conditional UPDATEs, for every model that declares ``TRANSITIONS`` (and,
for ``active()``, ``ACTIVE_STATUSES``): a background job's row, whatever app it lives in.

A transition changes exactly one row or none: a duplicate delivery, a cancel that raced the
worker, or a sweep that lost the race learns so and does nothing. Models that keep a history of
their changes (training jobs, batches) extend ``transition`` to write it.
"""

from __future__ import annotations

from typing import Any

from django.db import models
from django.utils import timezone


def transition_sources(model: type[models.Model], *, source: str | list[str],
                       target: str) -> list[str]:
    """The states a change may leave, each checked against the model's TRANSITIONS."""
    sources = [source] if isinstance(source, str) else list(source)
    for state in sources:
        if target not in model.TRANSITIONS.get(state, ()):  # type: ignore[attr-defined]
            raise ValueError(f"Illegal {model.__name__} transition {state} -> {target}")
    return sources


class StatusQuerySet(models.QuerySet):
    def active(self) -> StatusQuerySet:
        return self.filter(status__in=self.model.ACTIVE_STATUSES)

    def transition(self, pk: Any, *, source: str | list[str], target: str,
                   **fields: Any) -> bool:
        """Move one row from `source` (a state or several) to `target` with one conditional
        UPDATE; True only when exactly this call changed the row."""
        sources = transition_sources(self.model, source=source, target=target)
        fields.setdefault("updated_at", timezone.now())
        return self.filter(pk=pk, status__in=sources).update(status=target, **fields) == 1
