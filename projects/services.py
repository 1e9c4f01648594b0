"""Writes for projects: creating them, members and roles, invitations, and the activity log."""

from __future__ import annotations

import hashlib
import logging
import secrets
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, models, transaction
from django.db.models import Q
from django.utils import timezone

from . import policy
from .models import (
    ROLE_RANK,
    Activity,
    Invitation,
    LastProject,
    Membership,
    Project,
    Role,
)

# The words people know these rows by, where Django's default plural ("ml models") is not it.
_HOLDING_NAMES = {"classification.MLModel": "models", "classification.BatchJob": "batches",
                  "dataset_management.ImportJob": "imports"}
RUNNING = " still running"
logger = logging.getLogger(__name__)


class ProjectError(ValueError):
    """A refusal in plain words (last owner, unknown user, expired link ...)."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class InvitationNotYours(ProjectError):
    """The invitation was made for someone else: a 403, and a line in the project's log."""


# A link that admits whoever holds it is a bearer key: it may give no more than this.
ANYONE_ROLE_MAX = Role.REVIEWER
INVITATION_NEEDS_ADDRESS = ("Give the e-mail of the person the invitation is for, or choose a "
                            "link for anyone who holds it (reviewer at most).")


def anyone_role_refused(role: str) -> str:
    return (f"A link for anyone who holds it gives at most the {ANYONE_ROLE_MAX} role; to "
            f"invite a {role}, give their e-mail.")


def activity_record(*, project: Project | int, actor: Any, verb: str, summary: str,
                    subject: models.Model | None = None, **detail: Any) -> Activity:
    """Append one line to the project's log; actor None means the system did it."""
    project_id = getattr(project, "pk", project)
    return Activity.objects.create(
        project_id=project_id,
        actor_id=getattr(actor, "pk", None) if actor is not None else None,
        verb=verb, summary=summary[:500],
        subject_type=subject._meta.model_name if subject is not None else "",
        subject_id=str(subject.pk) if subject is not None else "",
        detail=detail,
    )


def project_personal(*, user: Any) -> Project:
    """The user's personal project, made on first need (a user never has no project)."""
    existing = Project.objects.filter(personal_for_id=user.pk).first()
    if existing is not None:
        return existing
    try:
        with transaction.atomic():
            project = Project.objects.create(
                name=f"{user.get_username()}'s project", personal_for_id=user.pk,
                created_by_id=user.pk,
            )
            Membership.objects.create(project=project, user_id=user.pk, role=Role.OWNER)
    except IntegrityError:  # a concurrent request made it first
        return Project.objects.get(personal_for_id=user.pk)
    return project


def project_personal_id(*, user_id: int | None) -> int | None:
    """The personal project's id for a row saved with only an owner (None without one)."""
    if user_id is None:
        return None
    for pk in Project.objects.filter(personal_for_id=user_id).values_list("pk", flat=True):
        return pk
    return project_personal(user=get_user_model().objects.get(pk=user_id)).pk


def project_last_remember(*, user: Any, project: Project) -> None:
    """The project a person chose to work in is where their next login lands."""
    LastProject.objects.update_or_create(user_id=user.pk, defaults={"project": project})


def project_create(*, user: Any, name: str) -> Project:
    name = (name or "").strip()
    if not name:
        raise ProjectError("A project needs a name.")
    with transaction.atomic():
        project = Project.objects.create(name=name[:200], created_by_id=user.pk)
        Membership.objects.create(project=project, user_id=user.pk, role=Role.OWNER)
        activity_record(project=project, actor=user, verb="project_created",
                        summary=f"{user.get_username()} created the project “{project.name}”",
                        subject=project)
    return project


def project_rename(*, user: Any, project: Project, name: str) -> Project:
    policy.require(user=user, action=policy.Action.RENAME_PROJECT, project=project)
    name = (name or "").strip()
    if not name:
        raise ProjectError("A project needs a name.")
    old, project.name = project.name, name[:200]
    project.save(update_fields=["name"])
    activity_record(project=project, actor=user, verb="project_renamed",
                    summary=f"{user.get_username()} renamed the project from “{old}” "
                            f"to “{project.name}”", subject=project, old=old)
    return project


def project_delete(*, user: Any, project: Project) -> None:
    """Only an empty project goes: its rows are moved or deleted first, on purpose. Ended jobs
    that are only a record (imports: CASCADE) go with it; one still running refuses it."""
    policy.require(user=user, action=policy.Action.DELETE_PROJECT, project=project)
    if project.personal_for_id is not None:
        raise ProjectError("A personal project cannot be deleted: it is where your work goes "
                           "when you choose no other project.")
    held = project_holdings(project=project)
    if held:
        listed = ", ".join(f"{n} {what}" for what, n in held.items())
        running = any(what.endswith(RUNNING) for what in held)
        raise ProjectError(f"The project still holds {listed}; "
                           + ("wait for what runs to end (or cancel it), and " if running else "")
                           + "move or delete them first.")
    project.delete()


def project_holdings(*, project: Project) -> dict[str, int]:
    """What keeps the project from being deleted: every kind of row that protects its project,
    and the rows still active (queued, running) of a kind that goes with it (CASCADE) once
    ended, so a worker never loses the row it writes to.

    Read from the relations themselves, so a new app's rows (a screening session, whatever
    comes next) are counted the day they are added, instead of surfacing as a ProtectedError.
    """
    held: dict[str, int] = {}
    for relation in Project._meta.related_objects:
        rows = getattr(project, relation.get_accessor_name())
        meta = relation.related_model._meta
        what = _HOLDING_NAMES.get(meta.label, str(meta.verbose_name_plural))
        active = getattr(relation.related_model, "ACTIVE_STATUSES", None)
        if relation.on_delete is models.PROTECT:
            count = rows.count()
        elif relation.on_delete is models.CASCADE and active:
            count, what = rows.filter(status__in=active).count(), f"{what}{RUNNING}"
        else:
            continue
        if count:
            held[what] = count
    return held


def user_find(*, identifier: str, not_found_hint: str = "") -> Any:
    """The one user with this username, or this e-mail when it looks like one.

    Two matches (usernames differing only in case, a shared e-mail) are refused rather than
    one picked: adding the wrong person to a project is worse than asking for the username.
    """
    identifier = (identifier or "").strip()
    by_email = Q(email__iexact=identifier) if "@" in identifier else Q(pk__in=[])
    users = (list(get_user_model().objects.filter(Q(username__iexact=identifier) | by_email)[:2])
             if identifier else [])
    if not users:
        raise ProjectError(f"No user is called “{identifier}”.{not_found_hint}")
    if len(users) > 1:
        raise ProjectError(f"More than one user matches “{identifier}”; give the username.")
    return users[0]


def _role_check(role: str) -> str:
    if role not in Role.values:
        raise ProjectError(f"Unknown role “{role}”; choose one of {', '.join(Role.values)}.")
    return role


def _owners_left(project: Project, *, without_user_id: int) -> int:
    return project.memberships.filter(role=Role.OWNER).exclude(user_id=without_user_id).count()


def member_add(*, user: Any, project: Project, identifier: str, role: str) -> Membership:
    """Add an existing user by username or e-mail, or change the role of one already in."""
    policy.require(user=user, action=policy.Action.MANAGE_MEMBERS, project=project)
    member = user_find(identifier=identifier,
                       not_found_hint=" Invite them with a link instead.")
    return member_set(actor=user, project=project, member=member, role=_role_check(role))


def member_set(*, actor: Any, project: Project, member: Any, role: str) -> Membership:
    """Give `member` the role (no policy check: callers have made it, or are the CLI)."""
    _role_check(role)
    with transaction.atomic():
        membership = Membership.objects.select_for_update().filter(
            project=project, user=member).first()
        if membership is not None and membership.role == role:
            return membership
        if (membership is not None and membership.role == Role.OWNER
                and not _owners_left(project, without_user_id=member.pk)):
            raise ProjectError("A project needs at least one owner: make someone else owner "
                               "first.")
        before = membership.role if membership else None
        if membership is None:
            membership = Membership.objects.create(project=project, user=member, role=role)
        else:
            membership.role = role
            membership.save(update_fields=["role"])
        who = actor.get_username() if actor is not None else "An administrator"
        if actor is not None and actor.pk == member.pk:  # an invitation accepted
            summary = f"{who} joined as {role} through an invitation link"
        elif before is None:
            summary = f"{who} added {member.get_username()} as {role}"
        else:
            summary = f"{who} changed {member.get_username()}'s role from {before} to {role}"
        activity_record(project=project, actor=actor, verb="member_role" if before else
                        "member_added", summary=summary, subject=membership,
                        member=member.get_username(), role=role, before=before)
    policy.role_forget(member)
    return membership


def member_remove(*, user: Any | None, project: Project, member: Any) -> None:
    """An owner removes a member; anyone may remove themselves (leave). Never the last owner.

    `user` None is an administrator at the command line, who needs no role.
    """
    left = user is not None and member.pk == user.pk
    if user is not None and not left:
        policy.require(user=user, action=policy.Action.MANAGE_MEMBERS, project=project)
    with transaction.atomic():
        membership = Membership.objects.select_for_update().filter(
            project=project, user=member).first()
        if membership is None:
            raise ProjectError(f"{member.get_username()} is not a member of this project.")
        if membership.role == Role.OWNER and not _owners_left(project, without_user_id=member.pk):
            raise ProjectError("The last owner cannot leave or be removed: make someone else "
                               "owner first.")
        membership.delete()
        who = user.get_username() if user is not None else "An administrator"
        summary = (f"{who} left the project" if left
                   else f"{who} removed {member.get_username()}")
        activity_record(project=project, actor=user, verb="member_left" if left else
                        "member_removed", summary=summary, member=member.get_username())
    policy.role_forget(member)


def _key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def invitation_create(*, user: Any, project: Project, role: str, email: str = "",
                      anyone: bool = False, days: int | None = None) -> tuple[Invitation, str]:
    """A new invitation and its key, which is shown once and never stored.

    With `email`, only a user with that e-mail can accept it. Without one the link admits
    whoever holds it, so it must be asked for (`anyone`) and gives at most ANYONE_ROLE_MAX."""
    policy.require(user=user, action=policy.Action.MANAGE_MEMBERS, project=project)
    _role_check(role)
    email = email.strip()
    if not email and not anyone:
        raise ProjectError(INVITATION_NEEDS_ADDRESS)
    if not email and ROLE_RANK[role] > ROLE_RANK[ANYONE_ROLE_MAX]:
        raise ProjectError(anyone_role_refused(role))
    key = secrets.token_urlsafe(24)
    days = days if days is not None else settings.INVITATION_DAYS
    invitation = Invitation.objects.create(
        project=project, role=role, email=email, created_by_id=user.pk, key_hash=_key_hash(key),
        expires_at=timezone.now() + timedelta(days=days),
    )
    activity_record(project=project, actor=user, verb="invitation_created", subject=invitation,
                    summary=f"{user.get_username()} made an invitation link for a {role}"
                            + (f" ({email})" if email else ""), role=role)
    return invitation, key


def invitation_revoke(*, user: Any, invitation: Invitation) -> None:
    policy.require(user=user, action=policy.Action.MANAGE_MEMBERS, project=invitation.project)
    Invitation.objects.filter(pk=invitation.pk, revoked_at=None, accepted_at=None).update(
        revoked_at=timezone.now())
    activity_record(project=invitation.project_id, actor=user, verb="invitation_revoked",
                    summary=f"{user.get_username()} revoked an invitation for a "
                            f"{invitation.role}", subject=invitation)


def invitation_open(*, key: str) -> Invitation:
    """The invitation a key opens, or a ProjectError saying why it no longer does."""
    invitation = (Invitation.objects.select_related("project")
                  .filter(key_hash=_key_hash(key or "")).first())
    if invitation is None:
        raise ProjectError("This invitation link is not valid. Ask for a new one.")
    if invitation.revoked_at is not None:
        raise ProjectError("This invitation was withdrawn. Ask for a new one.")
    if invitation.accepted_at is not None:
        raise ProjectError("This invitation has already been used. Ask for a new one.")
    if invitation.expires_at <= timezone.now():
        raise ProjectError("This invitation has expired. Ask for a new one.")
    return invitation


def invitation_invitee_check(*, invitation: Invitation, email: str, username: str) -> None:
    """InvitationNotYours (and a line in the project's log) when `email` is not the address the
    invitation was made for; a link for anyone above ANYONE_ROLE_MAX (made before links were
    bound) is refused likewise. Called before any account or membership is written, so the
    log line stays whatever the caller rolls back."""
    refusal = invitation_refusal_for(invitation=invitation, email=email)
    if refusal is None:
        return
    bound = invitation.email.strip()
    activity_record(project=invitation.project_id, actor=None, verb="invitation_refused",
                    subject=invitation, who=username, role=invitation.role,
                    summary=f"{username} tried to accept an invitation as {invitation.role}"
                            + (f" made for {bound}" if bound else " made before links were "
                               "bound") + "; refused")
    logger.warning("invitation %s for %s refused to %s", invitation.pk, bound or "anyone",
                   username)
    raise InvitationNotYours(refusal)


def invitation_refusal_for(*, invitation: Invitation, email: str) -> str | None:
    """Why a person with `email` may not accept `invitation` (None: they may). Writes nothing:
    the page shows it before anyone asks to join."""
    bound = invitation.email.strip()
    if bound:
        if bound.casefold() == (email or "").strip().casefold():
            return None
        return ("This invitation was made for another e-mail address: only its invitee can "
                "accept it. Ask the project's owner for your own.")
    if ROLE_RANK[invitation.role] <= ROLE_RANK[ANYONE_ROLE_MAX]:
        return None
    return ("This invitation link gives more than a reviewer's role to whoever holds it; ask "
            "for an invitation made for your e-mail.")


def invitation_accept(*, user: Any, key: str) -> Membership:
    """Join with the link's role. A member the link would not raise keeps their role, and the
    link stays unused for the person it was meant for. InvitationNotYours for a user whose
    e-mail is not the one it was made for."""
    invitation_invitee_check(invitation=invitation_open(key=key), email=user.email,
                             username=user.get_username())
    with transaction.atomic():
        invitation = invitation_open(key=key)
        current = policy.role_of(user=user, project=invitation.project)
        if current is not None and ROLE_RANK[current] >= ROLE_RANK[invitation.role]:
            return Membership.objects.get(project=invitation.project, user=user)
        claimed = Invitation.objects.filter(pk=invitation.pk, accepted_at=None).update(
            accepted_at=timezone.now(), accepted_by_id=user.pk)
        if claimed != 1:
            raise ProjectError("This invitation has already been used. Ask for a new one.")
        return member_set(actor=user, project=invitation.project, member=user,
                          role=invitation.role)
