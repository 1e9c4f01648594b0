"""Tags on a session's records: a maintainer defines them, reviewers put them on records.

Each person's tag on a record is a row of its own (who, when), so what a blind reviewer sees of
them follows their Sight: their own only, since another reviewer's tag could tell its answer.
Defining a tag is logged; putting one on a record is not (the row keeps who and when, and a log
line about it would be another person's line about a record to a blind reviewer).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from projects import policy
from projects.services import activity_record
from screening.errors import ScreeningError
from screening.models import TAG_COLOURS, Record, RecordTag, ScreeningSession, Tag
from screening.visibility import Sight

NAME_MAX = 60


def tag_list(*, session: ScreeningSession) -> QuerySet[Tag]:
    return Tag.objects.filter(session=session).order_by("name")


def tag_get(*, session: ScreeningSession, name: Any) -> Tag:
    """The session's tag by its name, else its id; ScreeningError naming the ones it has."""
    name = str(name or "").strip()
    found = tag_list(session=session)
    tag = found.filter(name__iexact=name).first() or (
        found.filter(pk=int(name)).first() if name.isdigit() else None)
    if tag is None:
        have = ", ".join(t.name for t in found) or "none yet"
        raise ScreeningError(f"This session has no tag “{name}” (its tags: {have}).")
    return tag


def tag_define(*, user: Any, session: ScreeningSession, name: str, colour: str = "") -> Tag:
    """A new tag for the session (a maintainer's); its name unique in the session, whatever
    the case, its colour one of TAG_COLOURS."""
    policy.require(user=user, action=policy.Action.DEFINE_TAGS, obj=session)
    name = " ".join(str(name or "").split())
    colour = str(colour or "grey").strip().lower()
    if not 0 < len(name) <= NAME_MAX:
        raise ScreeningError(f"Name the tag (1 to {NAME_MAX} characters).")
    if colour not in TAG_COLOURS:
        raise ScreeningError(f"Choose the tag's colour from {', '.join(TAG_COLOURS)}.")
    taken = ScreeningError(f"This session already has a tag “{name}”.")
    if Tag.objects.filter(session=session, name__iexact=name).exists():
        raise taken
    try:
        with transaction.atomic():
            tag = Tag.objects.create(session=session, name=name, colour=colour, created_by=user)
            activity_record(project=session.project_id, actor=user,
                            verb="screening_tag_define", subject=session,
                            summary=f"{user.get_username()} defined the tag “{name}” for "
                                    f"“{session.name}”", tag=tag.pk)
    except IntegrityError:
        raise taken from None
    return tag


def record_tag_put(*, user: Any, record: Record, tag: Tag) -> RecordTag:
    """The user's tag on the record; putting it twice keeps the first."""
    session = record.session
    policy.require(user=user, action=policy.Action.TAG_RECORDS, obj=session)
    if tag.session_id != session.pk:
        raise ScreeningError("That tag belongs to another session.")
    put, _ = RecordTag.objects.get_or_create(record=record, tag=tag, tagged_by=user)
    return put


def record_tag_remove(*, user: Any, record: Record, tag: Tag, tagged_by: str = "") -> int:
    """Take the user's tag off the record, or (`tagged_by`, a username) another person's: a
    maintainer's, who defines the tags. How many rows went (0: it was not there)."""
    policy.require(user=user, action=policy.Action.TAG_RECORDS, obj=record.session)
    whose = user
    if tagged_by and tagged_by != user.get_username():
        # Asked before looking: a reviewer must not learn whose tags a record carries.
        policy.require(user=user, action=policy.Action.DEFINE_TAGS, obj=record.session)
        whose = tagger_get(record=record, tag=tag, username=tagged_by)
    removed, _ = RecordTag.objects.filter(record=record, tag=tag, tagged_by=whose).delete()
    return removed


def tagger_get(*, record: Record, tag: Tag, username: str) -> Any:
    """The person, by username, who put `tag` on `record`; ScreeningError if nobody did."""
    put = (RecordTag.objects.filter(record=record, tag=tag, tagged_by__username=username)
           .select_related("tagged_by").first())
    if put is None:
        raise ScreeningError(f"“{username}” did not put the tag “{tag.name}” on this record.")
    return put.tagged_by


def record_tags_shown(*, record_ids: list[int], sight: Sight) -> dict[int, list[dict[str, Any]]]:
    """record id -> its tags as `sight` may see them (one query for them all)."""
    shown: dict[int, list[dict[str, Any]]] = defaultdict(list)
    rows = (RecordTag.objects.filter(record_id__in=record_ids).select_related("tag", "tagged_by")
            .order_by("tag__name", "tagged_at"))
    for row in rows:
        if sight.tag_shown(row.tagged_by_id):
            shown[row.record_id].append({
                "id": row.tag_id, "name": row.tag.name, "colour": row.tag.colour,
                "by": row.tagged_by.get_username(), "at": row.tagged_at.isoformat()})
    return shown


def tag_payload(tag: Tag) -> dict[str, Any]:
    return {"id": tag.pk, "name": tag.name, "colour": tag.colour,
            "created_at": tag.created_at.isoformat()}
