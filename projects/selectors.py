"""Reads for projects: the ones a user is in, their members, and the activity log."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import Count, OuterRef, QuerySet, Subquery

from . import policy
from .models import Activity, Invitation, LastProject, Membership, Project


def project_list(*, user: Any) -> QuerySet[Project]:
    return policy.scope(Project.objects.all(), user=user).order_by("name", "pk")


def project_list_rows(*, user: Any) -> QuerySet[Project]:
    """With the counts a list shows, and the user's own role, in one statement."""
    mine = Membership.objects.filter(project=OuterRef("pk"), user_id=user.pk)
    return project_list(user=user).annotate(
        member_count=Count("memberships", distinct=True),
        my_role=Subquery(mine.values("role")[:1]),
    )


def project_last_used_id(*, user: Any) -> int | None:
    """The project the person last chose to work in, while they are still a member of it."""
    return (LastProject.objects.filter(user_id=user.pk, project__memberships__user_id=user.pk)
            .values_list("project_id", flat=True).first())


def project_counts(*, project: Project) -> dict[str, int]:
    return {
        "datasets": project.datasets.count(),
        "models": project.ml_models.count(),
        "batches": project.batch_jobs.count(),
        "members": project.memberships.count(),
    }


def membership_list(*, project: Project) -> QuerySet[Membership]:
    return project.memberships.select_related("user").order_by("user__username")


def invitation_list_open(*, project: Project) -> QuerySet[Invitation]:
    from django.utils import timezone

    return project.invitations.filter(accepted_at=None, revoked_at=None,
                                      expires_at__gt=timezone.now()).select_related("created_by")


# An app above projects that keeps rows some members may not read about (screening: other
# people's lines about a blind session's decisions) narrows the log here, registered from its
# AppConfig.ready, so projects imports none of them. By name: registering twice is harmless.
ActivityNarrower = Callable[..., QuerySet[Activity]]
ACTIVITY_NARROWERS: dict[str, ActivityNarrower] = {}


def activity_narrower_register(*, name: str, func: ActivityNarrower) -> None:
    """`func(rows, user=, project=)` returns the rows of the log `user` may read."""
    ACTIVITY_NARROWERS[name] = func


def activity_list(*, project: Project, user: Any) -> QuerySet[Activity]:
    """The project's log, newest first, as `user` may read it (every narrower applied)."""
    rows = Activity.objects.filter(project=project).select_related("actor").order_by("-at", "-pk")
    for narrow in ACTIVITY_NARROWERS.values():
        rows = narrow(rows, user=user, project=project)
    return rows
