"""A maintainer names PRISMA's sources and gives their counts from before import (the page's
form and `POST /api/screening/<id>/prisma/sources/`): only the fields a request names change,
every change goes to the project's log with its old and new value, and a request with one bad
field keeps nothing of it (screening.prisma_sources checks it)."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.urls import path
from drf_spectacular.utils import OpenApiExample, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from projects import policy
from projects.services import activity_record
from screening import prisma_sources, selectors
from screening.models import ScreeningSession
from screening.prisma import prisma_counts
from screening.prisma_sources import KEY, REMOVED, PrismaSourcesInvalid

FIELDS = (("name", "name"), ("identified", "identified before import"), ("kind", "kind"))


def _changes(before: dict[str, Any], after: dict[str, Any],
             sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    changes = []
    for source in sources:
        raw = {"name": source["file"], "identified": source["imported"]}
        old = prisma_sources.prisma_source_shown(raw, before["sources"].get(source["file"]) or {})
        new = prisma_sources.prisma_source_shown(raw, after["sources"].get(source["file"]) or {})
        changes += [{"source": source["file"], "field": field, "old": old[field],
                     "new": new[field]} for field, _ in FIELDS if old[field] != new[field]]
    changes += [{"source": "", "field": f"removed_before_import.{key}",
                 "old": before["removed_before_import"][key],
                 "new": after["removed_before_import"][key]}
                for key in REMOVED if before["removed_before_import"][key]
                != after["removed_before_import"][key]]
    return changes


def _said(change: dict[str, Any]) -> str:
    field = dict(FIELDS).get(change["field"], change["field"].replace("_", " "))
    return f"{change['source'] + ' ' if change['source'] else ''}{field} " \
           f"{change['old']!r} → {change['new']!r}"


def prisma_sources_edit(*, user: Any, session: ScreeningSession,
                        data: Any) -> list[dict[str, Any]]:
    """Apply `data` ({sources: [{file, name?, identified?, kind?}], removed_before_import:
    {automation?, other?}}) and answer the changes made; PrismaSourcesInvalid saves nothing."""
    policy.require(user=user, action=policy.Action.EDIT_PRISMA, obj=session)
    with transaction.atomic():
        locked = ScreeningSession.objects.select_for_update().get(pk=session.pk)
        sources = prisma_counts(locked)["sources"]
        before = prisma_sources.prisma_edits_of(facts=locked.source_facts)
        after = prisma_sources.prisma_edits_validated(data=data, stored=before, sources=sources)
        changes = _changes(before, after, sources)
        if not changes:
            return []
        ScreeningSession.objects.filter(pk=locked.pk).update(
            source_facts={**(locked.source_facts or {}), KEY: after})
        activity_record(project=locked.project_id, actor=user, verb="screening_prisma_sources",
                        subject=locked, changes=changes,
                        summary=f"{user.get_username()} edited PRISMA of “{locked.name}”: "
                                + "; ".join(map(_said, changes)))
    session.refresh_from_db()
    return changes


def prisma_form_data(post: Any) -> dict[str, Any]:
    """The page's form as the API's body: one row per source file, every field sent, so an
    empty name or count puts the file's own back; PrismaSourcesInvalid for rows cut short."""
    columns = [post.getlist(key) for key in ("file", "name", "identified", "kind")]
    if len({len(column) for column in columns}) > 1:
        raise PrismaSourcesInvalid({"sources": "each row needs its file, name, count and kind"})
    return {"sources": [{"file": f, "name": n, "identified": i, "kind": k}
                        for f, n, i, k in zip(*columns, strict=True)],
            "removed_before_import": {key: post.get(f"removed_{key}", "") for key in REMOVED}}


SOURCES_BODY = inline_serializer("PrismaSourcesRequest", fields={
    "sources": serializers.ListField(required=False, child=serializers.DictField(), help_text=(
        "[{file, name?, identified?, kind?}]: file is the source as the counts name it (a file "
        "of the collection; a one-file dataset, its name); name is shown "
        "instead (at most 100 characters, empty for the file's); identified, the records it "
        "identified before import (not fewer than were imported; null for those imported); "
        "kind, database, register or other")),
    "removed_before_import": serializers.DictField(required=False, help_text=(
        "{automation?, other?}: of the records identified beyond those imported, how many "
        "automation tools removed and how many were removed for other reasons")),
})


SOURCES_EXAMPLES = [
    OpenApiExample("Name a source and give its count from before import", request_only=True,
                   value={"sources": [{"file": "Small", "name": "PubMed", "identified": 1250,
                                       "kind": "database"}],
                          "removed_before_import": {"automation": 30, "other": 0}}),
]


class PrismaSourcesApi(APIView):
    @extend_schema(summary="A maintainer names the PRISMA sources and gives their counts from "
                           "before import (only the fields named change; logged; 400 naming "
                           "each bad field, nothing saved)",
                   request=SOURCES_BODY, examples=SOURCES_EXAMPLES, responses=None)
    def post(self, request: Request, pk: int) -> Response:
        session = selectors.session_get(user=request.user, pk=pk)
        try:
            changes = prisma_sources_edit(user=request.user, session=session, data=request.data)
        except PrismaSourcesInvalid as exc:
            return Response({"detail": str(exc), "errors": exc.errors},
                            status=status.HTTP_400_BAD_REQUEST)
        counts = prisma_counts(session)
        return Response({"changes": changes, "sources": counts["sources"],
                         "identified": counts["identified"],
                         "before_import": counts["before_import"]})


urlpatterns = [
    path("screening/<int:pk>/prisma/sources/", PrismaSourcesApi.as_view(),
         name="screening_prisma_sources"),
]
