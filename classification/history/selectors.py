"""History reads: a job's or a batch's status changes, oldest first, in one query."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from classification.models import StatusChange


def status_changes_for(*, job: Any = None, batch: Any = None) -> QuerySet[StatusChange]:
    """The StatusChange rows of one job or one batch (a row or its pk), with who did each.

    The actor is joined (select_related), so listing them is one query however long the
    history is.
    """
    if (job is None) == (batch is None):
        raise ValueError("Give exactly one of job= or batch=")
    subject = {"job": job} if job is not None else {"batch": batch}
    return (
        StatusChange.objects.filter(**subject)
        .select_related("actor")
        .only("id", "job_id", "batch_id", "source", "target", "reason", "at",
              "actor__id", "actor__username")
        .order_by("at", "id")
    )


def status_history_rows(*, job: Any = None, batch: Any = None) -> list[dict[str, Any]]:
    """The history as plain data for the API: at, source, target, reason, actor (a username, or
    None for the system)."""
    return [
        {"at": change.at, "source": change.source, "target": change.target,
         "reason": change.reason,
         "actor": change.actor.username if change.actor_id else None}
        for change in status_changes_for(job=job, batch=batch)
    ]
