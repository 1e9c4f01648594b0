"""The command line's door to projects.policy: --project and --owner, refused in one line.

An operator's shell may act on any row (it has the database anyway); what these options add is
that a command run *for* someone (--owner) gets the refusal their role would get on the page or
the API, and that --project guards against acting on a row of the wrong project.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser
from django.db import models

from projects import policy
from projects.models import Project


def scope_arguments(parser: CommandParser, *, owner_help: str) -> None:
    parser.add_argument("--project", type=int, metavar="ID",
                        help="the project the row must be in (refused when it is not)")
    parser.add_argument("--owner", metavar="USERNAME", help=owner_help)


def user_named(username: str | None) -> Any:
    """The user --owner names; None without the option (the operator acts)."""
    if not username:
        return None
    users = get_user_model().objects
    try:
        return users.get(username=username)
    except users.model.DoesNotExist:
        raise CommandError(f"No user named '{username}'.") from None


def project_check(*, obj: models.Model, project_id: int | None, what: str) -> None:
    """CommandError unless `obj` is in project `project_id` (when --project was given)."""
    if project_id is None:
        return
    if not Project.objects.filter(pk=project_id).exists():
        raise CommandError(f"No project {project_id}.")
    actual = policy.project_id_of(obj)
    if actual != project_id:
        raise CommandError(f"{what} is not in project {project_id}: it is in project {actual}.")


def role_check(*, user: Any, action: str, obj: models.Model) -> None:
    """CommandError naming the role `action` needs unless `user` (when given) has it there."""
    if user is None:
        return
    try:
        policy.require(user=user, action=action, obj=obj)
    except policy.RoleRequired as exc:
        project = Project.objects.filter(pk=policy.project_id_of(obj)).first()
        where = f"project {project.pk} (“{project.name}”)" if project else "its project"
        raise CommandError(f"{user.get_username()} may not do this in {where}: "
                           f"{exc.message}") from None
