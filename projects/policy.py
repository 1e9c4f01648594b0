"""The one permission policy: which rows a user may see, and what they may do with them.

Every door (pages, API, management commands, downloads, tasks started for a user) asks here;
nothing compares owners by hand. Two answers only:

* a row outside the user's projects does not exist for them (Http404), so ids reveal nothing;
* a row they can see but whose action needs a higher role is RoleRequired (403) with a
  sentence naming the role.

Django's permission framework answers "may this user change any Dataset", not "in this
project"; django-rules would hold the same four-line predicate as here behind a registry. A
role rank and a table of actions is the whole policy, so it is written out in one file.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import QuerySet
from django.http import Http404

from .models import ROLE_RANK, Membership, Project, Role


class Action(models.TextChoices):
    VIEW = "view", "Viewing"
    DOWNLOAD = "download", "Downloading results and exports"
    CLASSIFY = "classify", "Classifying"
    EXPLAIN = "explain", "Explaining a prediction"
    REVIEW = "review", "Reviewing and correcting labels"
    UPLOAD = "upload", "Uploading or importing a dataset"
    TRAIN = "train", "Training"
    CANCEL = "cancel", "Cancelling"
    RESUME = "resume", "Resuming"
    ENSEMBLE = "ensemble", "Building an ensemble"
    DELETE = "delete", "Deleting"
    MOVE = "move", "Moving a dataset to another project"
    MANAGE_MEMBERS = "manage_members", "Managing members and invitations"
    RENAME_PROJECT = "rename_project", "Renaming the project"
    DELETE_PROJECT = "delete_project", "Deleting the project"
    SCREEN = "screen", "Screening records"
    RESOLVE_CONFLICTS = "resolve_conflicts", "Resolving screening conflicts"
    MANAGE_SCREENING = "manage_screening", "Managing a screening session"
    END_BLINDING = "end_blinding", "Ending a screening session's blinding"
    CHOOSE_SCREENERS = "choose_screeners", "Choosing who screens a session"
    DEFINE_TAGS = "define_tags", "Defining a screening session's tags"
    TAG_RECORDS = "tag_records", "Tagging records"
    RESCREEN = "rescreen", "Sending records back to be screened again"
    EDIT_PRISMA = "edit_prisma", "Naming a session's PRISMA sources and their counts"


REQUIRED_ROLE: dict[str, str] = {
    Action.VIEW: Role.VIEWER,
    Action.DOWNLOAD: Role.VIEWER,
    Action.CLASSIFY: Role.REVIEWER,
    Action.EXPLAIN: Role.REVIEWER,
    Action.REVIEW: Role.REVIEWER,
    Action.UPLOAD: Role.MAINTAINER,
    Action.TRAIN: Role.MAINTAINER,
    Action.CANCEL: Role.MAINTAINER,
    Action.RESUME: Role.MAINTAINER,
    Action.ENSEMBLE: Role.MAINTAINER,
    Action.DELETE: Role.MAINTAINER,
    Action.MOVE: Role.MAINTAINER,
    Action.MANAGE_MEMBERS: Role.OWNER,
    Action.RENAME_PROJECT: Role.OWNER,
    Action.DELETE_PROJECT: Role.OWNER,
    Action.SCREEN: Role.REVIEWER,
    Action.RESOLVE_CONFLICTS: Role.MAINTAINER,
    Action.MANAGE_SCREENING: Role.MAINTAINER,
    Action.END_BLINDING: Role.OWNER,
    Action.CHOOSE_SCREENERS: Role.MAINTAINER,
    Action.DEFINE_TAGS: Role.MAINTAINER,
    Action.TAG_RECORDS: Role.REVIEWER,
    Action.RESCREEN: Role.MAINTAINER,
    Action.EDIT_PRISMA: Role.MAINTAINER,
}


class RoleRequired(PermissionDenied):
    """A known row the user's role may not act on: answered 403 with this sentence."""

    def __init__(self, *, action: str, needed: str, have: str | None) -> None:
        self.action, self.needed, self.have = action, needed, have
        self.message = (
            f"{Action(action).label} needs the {Role(needed).label.lower()} role in this "
            f"project; you are a{'n' if (have or 'v')[0] in 'aeiou' else ''} "
            f"{Role(have).label.lower() if have else 'non-member'}."
        )
        super().__init__(self.message)


def _lookup(model: type[models.Model]) -> str:
    return getattr(model, "PROJECT_LOOKUP", "project")


def _member_projects(user: Any) -> QuerySet:
    return Membership.objects.filter(user_id=user.pk).values("project_id")


def scope(queryset: QuerySet, *, user: Any, project: Project | int | None = None) -> QuerySet:
    """The rows of `queryset` in the user's projects (only `project`'s, when given).

    A subquery, not a list of ids: one statement whatever the number of projects.
    """
    if user is None or not getattr(user, "is_authenticated", False):
        return queryset.none()
    lookup = _lookup(queryset.model)
    queryset = queryset.filter(**{f"{lookup}__in": _member_projects(user)})
    if project is not None:
        queryset = queryset.filter(**{lookup: getattr(project, "pk", project)})
    return queryset


def project_id_of(obj: models.Model) -> int | None:
    """Follow the model's PROJECT_LOOKUP from the row to its project's id."""
    lookup = _lookup(type(obj))
    if lookup == "pk":
        return obj.pk
    *hops, last = lookup.split("__")
    for hop in hops:
        obj = getattr(obj, hop)
        if obj is None:
            return None
    return getattr(obj, f"{last}_id")


def role_of(*, user: Any, project: Project | int | None) -> str | None:
    """The user's role in the project, or None. Cached on the user object for the request."""
    if project is None or user is None or not getattr(user, "is_authenticated", False):
        return None
    project_id = getattr(project, "pk", project)
    cache: dict[int, str | None] = user.__dict__.setdefault("_project_roles", {})
    if project_id not in cache:
        cache[project_id] = (
            Membership.objects.filter(user_id=user.pk, project_id=project_id)
            .values_list("role", flat=True).first()
        )
    return cache[project_id]


def role_remember(*, user: Any, project_id: int, role: str | None) -> None:
    """A role read along with other rows (the switcher's), so role_of need not ask again."""
    user.__dict__.setdefault("_project_roles", {})[project_id] = role


def role_forget(user: Any) -> None:
    """After a role change in this request, so the next question asks the database."""
    user.__dict__.pop("_project_roles", None)


def allows(role: str | None, action: str) -> bool:
    return role is not None and ROLE_RANK[role] >= ROLE_RANK[REQUIRED_ROLE[action]]


# An action a row may narrow to the members it names in a many-to-many field (a screening
# session's `screeners`, chosen by its creator); the field empty, the role alone decides.
ASSIGNED_IN: dict[str, str] = {Action.SCREEN: "screeners"}


class NotAssigned(RoleRequired):
    """A member whose role allows the action, on a row that names others to do it: 403 with
    this sentence at every door that answers RoleRequired."""

    def __init__(self, *, action: str) -> None:
        self.action, self.needed, self.have = action, REQUIRED_ROLE[action], None
        self.message = (f"{Action(action).label} here is for the members this session's "
                        "creator chose; ask a maintainer to add you.")
        PermissionDenied.__init__(self, self.message)


def assigned(*, user: Any, action: str, obj: models.Model | None) -> bool:
    """Whether `obj` leaves `action` to the user: true unless it names others only."""
    field = ASSIGNED_IN.get(action)
    chosen = getattr(obj, field, None) if field and obj is not None and obj.pk else None
    if chosen is None or not hasattr(chosen, "values_list"):
        return True
    ids = set(chosen.values_list("pk", flat=True))
    return not ids or getattr(user, "pk", None) in ids


# An action a row leaves to the member who made it (the foreign key named here): a screening
# session's screeners are its creator's choice (issue 35), not any maintainer's. An owner may
# still act, so a session whose creator has left, or no longer answers, is never stuck.
CREATOR_IN: dict[str, str] = {Action.CHOOSE_SCREENERS: "created_by"}


class NotCreator(RoleRequired):
    """A member whose role allows the action, on a row that leaves it to its creator: 403 with
    this sentence at every door that answers RoleRequired."""

    def __init__(self, *, action: str) -> None:
        self.action, self.needed, self.have = action, REQUIRED_ROLE[action], None
        self.message = (f"{Action(action).label} is for the member who created it, or an "
                        "owner of the project.")
        PermissionDenied.__init__(self, self.message)


def created_by(*, user: Any, action: str, obj: models.Model | None, role: str | None) -> bool:
    """Whether `obj` leaves `action` to the user: its creator's, or any owner's."""
    field = CREATOR_IN.get(action)
    if not field or obj is None or (role and ROLE_RANK[role] >= ROLE_RANK[Role.OWNER]):
        return True
    return getattr(obj, f"{field}_id", None) == getattr(user, "pk", None)


def can(*, user: Any, action: str, obj: models.Model | None = None,
        project: Project | int | None = None) -> bool:
    if obj is not None:
        project = project_id_of(obj)
    role = role_of(user=user, project=project)
    return (allows(role, action) and assigned(user=user, action=action, obj=obj)
            and created_by(user=user, action=action, obj=obj, role=role))


def require(*, user: Any, action: str, obj: models.Model | None = None,
            project: Project | int | None = None) -> None:
    """Raise RoleRequired unless the user may do `action` on `obj` (or in `project`).

    A row outside the user's projects should have been answered 404 before it got here; a
    project they are not in is still refused, as a non-member. A row that names who does the
    action (ASSIGNED_IN) refuses the other members with NotAssigned; one that leaves it to its
    creator (CREATOR_IN) refuses the others below owner with NotCreator.
    """
    if obj is not None:
        project = project_id_of(obj)
    role = role_of(user=user, project=project)
    if not allows(role, action):
        raise RoleRequired(action=action, needed=REQUIRED_ROLE[action], have=role)
    if not assigned(user=user, action=action, obj=obj):
        raise NotAssigned(action=action)
    if not created_by(user=user, action=action, obj=obj, role=role):
        raise NotCreator(action=action)


def object_get(queryset: QuerySet | type[models.Model], *, user: Any,
               action: str = Action.VIEW, **lookup: Any) -> Any:
    """The row, if the user can see it and may do `action` on it; else 404, or 403 by role."""
    if isinstance(queryset, type):
        queryset = queryset._default_manager.all()
    try:
        obj = scope(queryset, user=user).get(**lookup)
    except (queryset.model.DoesNotExist, ValueError, TypeError) as exc:
        raise Http404(f"No such {queryset.model._meta.verbose_name}.") from exc
    require(user=user, action=action, obj=obj)
    return obj


def project_get(*, user: Any, project_id: Any, action: str = Action.VIEW) -> Project:
    return object_get(Project, user=user, action=action, pk=project_id)


def actions_for(role: str | None) -> dict[str, bool]:
    """{action: allowed} for a role: what templates ask to hide the buttons a role can't use."""
    return {action: allows(role, action) for action in REQUIRED_ROLE}


def actions_on(*, user: Any, obj: models.Model) -> dict[str, bool]:
    """What a detail page may draw for this row (its project may not be the current one)."""
    return actions_for(role_of(user=user, project=project_id_of(obj)))


# --- screening: who sees whose decisions ----------------------------------------------------


class ScreeningSight(models.TextChoices):
    """How much of a screening session's decisions a role sees (issue 35: blind means blind)."""

    ALL = "all", "Every decision and note"
    OWN = "own", "Their own decisions and notes only"
    FINAL = "final", "Final decisions only (agreed, resolved or the stopping rule's)"


def screening_sight(*, role: str | None, blind: bool) -> str:
    """What a role sees of a session's decisions, on every page, export and API answer.

    While a session is blind (two reviewers per record, blinding not ended by the owner) dual
    screening is independent only if a reviewer cannot learn the other's answer: a reviewer
    sees only their own decisions and notes, not even the final values (a missing final would
    tell them the other disagreed, and they may change their own answer until it is resolved);
    a viewer sees only the final decisions; maintainers and owners, who resolve, see all.
    Without blinding every member sees everything, as before.
    """
    if allows(role, Action.RESOLVE_CONFLICTS) or not blind:
        return ScreeningSight.ALL
    if allows(role, Action.SCREEN):
        return ScreeningSight.OWN
    return ScreeningSight.FINAL


def screening_conflicts_visible(*, role: str | None, blind: bool) -> bool:
    """Only those who resolve see the conflicts list while a session is blind."""
    return screening_sight(role=role, blind=blind) == ScreeningSight.ALL and role is not None


# Blind without side channels (issue 50): a figure or a line drawn from final values or from
# the pairs of decisions - PRISMA after identification, which records reached full text,
# agreement, the ranking's refreshes, the stop's counts, other people's log lines about
# decisions - moves when the other reviewer answers, and read before and after it tells a blind
# reviewer what was said. The rules below are the whole list of what a sight sees of them.


def screening_outcomes_shown(*, sight: str) -> bool:
    """Whether a sight sees figures drawn from final values or pairs of decisions: everyone but
    a blind reviewer, who gets figures of their own decisions or "hidden while blind"."""
    return sight != ScreeningSight.OWN


def screening_fulltext_open(*, sight: str, stopped: bool) -> bool:
    """Whether the full-text stage is open to a sight. Its list is the records that passed
    title/abstract, so a blind reviewer would read there the other's answers, and could still
    change their own; once the session is stopped no title/abstract answer changes, and the
    owner's end of blinding makes the sight ALL."""
    return screening_outcomes_shown(sight=sight) or stopped


class FullTextClosed(RoleRequired):
    """A blind reviewer at the full-text stage before the session is stopped: 403 with this
    sentence at every door that answers RoleRequired."""

    def __init__(self) -> None:
        self.action, self.needed, self.have = Action.SCREEN, REQUIRED_ROLE[Action.SCREEN], None
        self.message = ("Full text opens to the reviewers of a blind session once it is "
                        "stopped: which records reached it would tell you the other reviewer's "
                        "answers. Ask the owner to end blinding to open it sooner.")
        PermissionDenied.__init__(self, self.message)


# Log lines about a session that say nothing of any decision: who made it, its criteria and
# screeners, the end of blinding.
# A tag's definition (its name and colour) says nothing of a decision either, nor PRISMA's
# sources and their counts from before import.
SCREENING_ACTIVITY_OPEN = frozenset({"screening_create", "screening_desk", "screening_unblind",
                                     "screening_tag_define", "screening_prisma_sources"})
# A resolution tells that the reviewers disagreed: hidden from a viewer too while blind, as the
# conflicts are (screening_conflicts_visible).
SCREENING_ACTIVITY_RESOLVING = frozenset({"screening_resolve"})


def screening_activity_hidden(*, sight: str) -> frozenset[str] | None:
    """The verbs of other people's log lines about a blind session a sight may not read:
    None for every verb outside SCREENING_ACTIVITY_OPEN (a blind reviewer: full-text actions,
    resolutions, the switch to sampling and the stop carry counts or outcomes), else a set."""
    if sight == ScreeningSight.OWN:
        return None
    return SCREENING_ACTIVITY_RESOLVING if sight == ScreeningSight.FINAL else frozenset()


# --- screening: tags and the records' filters -------------------------------------------------


def screening_others_tags_shown(*, sight: str) -> bool:
    """Whether a sight sees the tags other people put on records: not a blind reviewer, to whom
    another reviewer's tag ("likely include") could tell their answer."""
    return sight != ScreeningSight.OWN


def screening_filter_by_reviewer(*, sight: str) -> bool:
    """Filtering records by who decided them needs every decision in sight."""
    return sight == ScreeningSight.ALL


def screening_filter_by_stage(*, sight: str) -> bool:
    """A record's stage follows its final values: not for a blind reviewer."""
    return screening_outcomes_shown(sight=sight)
