"""A session's records over the API: search and filters (paged), tags, re-screening a subset.

The same selectors and services as the records page; a session outside your projects is a 404,
an action above your role a 403 naming the role, a filter or body that is not right a 400
saying what is."""

from __future__ import annotations

from typing import Any

from django.urls import path
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema, inline_serializer
from rest_framework import generics, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from projects import policy
from screening import api_schema, record_search, rescreen, selectors, tags, visibility
from screening.errors import ScreeningError
from screening.models import TAG_COLOURS

_FILTERS = [
    OpenApiParameter("q", str, description="Text in the title, abstract, authors, keywords or "
                     "record id (case-insensitive)"),
    OpenApiParameter("tag", str, description="A tag's name (a blind reviewer: their own tags)"),
    OpenApiParameter("decision", str, enum=list(record_search.DECISIONS),
                     description="Records with a decision of this value you can see (a blind "
                     "reviewer: their own; a viewer of a blind session: the final values)"),
    OpenApiParameter("reviewer", str, description="A reviewer's username (not while blind "
                     "to you)"),
    OpenApiParameter("stage", str, enum=list(record_search.STAGES),
                     description="Where the record is (not while blind to you)"),
]

TAG_DEFINE = inline_serializer("ScreeningTagRequest", fields={
    "name": serializers.CharField(max_length=tags.NAME_MAX),
    "colour": serializers.ChoiceField(choices=list(TAG_COLOURS), required=False,
                                      default="grey"),
})
RECORD_TAG = inline_serializer("ScreeningRecordTagRequest", fields={
    "record": serializers.IntegerField(help_text="The record's id"),
    "tag": serializers.CharField(help_text="The tag's name (or id)"),
})
RESCREEN = inline_serializer("ScreeningRescreenRequest", fields={
    "records": serializers.ListField(child=serializers.IntegerField(), required=False,
                                     help_text="The records' ids; or `filter`"),
    "filter": serializers.DictField(child=serializers.CharField(), required=False,
                                    help_text="q, tag, decision, reviewer, stage: every "
                                    "record the list shows with them"),
    "reason": serializers.CharField(help_text="Why they are screened again (logged)"),
})


def _session(request: Request, pk: int, action: str = policy.Action.VIEW) -> Any:
    return selectors.session_get(user=request.user, pk=pk, action=action)


def _body(request: Request) -> dict[str, Any]:
    if not isinstance(request.data, dict):
        raise ValidationError({"detail": "Send a JSON object."})
    return request.data


class RecordListApi(generics.GenericAPIView):
    @extend_schema(summary="A session's records, searched and filtered, in the collection's "
                           "order (paged): title, tags and the decisions you may see",
                   parameters=_FILTERS, responses=api_schema.RECORD_ROWS)
    def get(self, request: Request, pk: int) -> Response:
        session = _session(request, pk)
        sight = visibility.session_sight(user=request.user, session=session)
        try:
            found = record_search.record_search(
                session=session, sight=sight, **record_search.search_filters(request.GET))
        except ScreeningError as exc:
            raise ValidationError({"detail": str(exc)}) from None
        page = self.paginate_queryset(found)
        return self.get_paginated_response(record_search.record_rows(records=page, sight=sight))


class TagListApi(APIView):
    @extend_schema(summary="A session's tags", responses=None)
    def get(self, request: Request, pk: int) -> Response:
        session = _session(request, pk)
        return Response({"tags": [tags.tag_payload(t) for t in tags.tag_list(session=session)]})

    @extend_schema(summary="Define a tag for the session (maintainers and owners; logged)",
                   request=TAG_DEFINE, examples=[OpenApiExample(
                       "Randomised trials", request_only=True,
                       value={"name": "RCT", "colour": "blue"})],
                   responses=None)
    def post(self, request: Request, pk: int) -> Response:
        session, body = _session(request, pk), _body(request)
        try:
            tag = tags.tag_define(user=request.user, session=session,
                                  name=str(body.get("name") or ""),
                                  colour=str(body.get("colour") or ""))
        except ScreeningError as exc:
            raise ValidationError({"detail": str(exc)}) from None
        return Response(tags.tag_payload(tag), status=status.HTTP_201_CREATED)


class RecordTagApi(APIView):
    @extend_schema(summary="Put one of the session's tags on a record (reviewers and above)",
                   request=RECORD_TAG, examples=[OpenApiExample(
                       "Tag a record", request_only=True,
                       value={"record": 1, "tag": "needs translation"})], responses=None)
    def post(self, request: Request, pk: int) -> Response:
        session, body = _session(request, pk), _body(request)
        try:
            record = selectors.record_get(user=request.user, session=session,
                                          pk=int(body.get("record") or 0))
            put = tags.record_tag_put(user=request.user, record=record,
                                      tag=tags.tag_get(session=session, name=body.get("tag")))
        except (ScreeningError, ValueError, TypeError) as exc:
            raise ValidationError({"detail": str(exc)}) from None
        return Response({"record": record.pk, "tag": put.tag.name,
                         "by": request.user.get_username(), "at": put.tagged_at.isoformat()},
                        status=status.HTTP_201_CREATED)


class RecordTagDetailApi(APIView):
    @extend_schema(summary="Take your tag off a record (a maintainer: anyone's, by "
                           "`?tagged_by=username`)", responses=None)
    def delete(self, request: Request, pk: int, record_id: int, tag_id: int) -> Response:
        session = _session(request, pk)
        record = selectors.record_get(user=request.user, session=session, pk=record_id)
        try:
            removed = tags.record_tag_remove(
                user=request.user, record=record, tag=tags.tag_get(session=session, name=tag_id),
                tagged_by=str(request.GET.get("tagged_by") or ""))
        except ScreeningError as exc:
            raise ValidationError({"detail": str(exc)}) from None
        return Response({"removed": removed})


def _rescreen_ids(*, session: Any, sight: Any, body: dict[str, Any]) -> list[int]:
    if body.get("records") is not None:
        if not isinstance(body["records"], list):
            raise ScreeningError("`records` is a list of record ids.")
        return [int(pk) for pk in body["records"]]
    if not isinstance(body.get("filter"), dict):
        raise ScreeningError("Choose the records: `records` (ids) or `filter`.")
    found = record_search.record_search(session=session, sight=sight,
                                        **record_search.search_filters(body["filter"]))
    return list(found.values_list("pk", flat=True))


class RescreenApi(APIView):
    @extend_schema(summary="Send records back to title/abstract screening (maintainers and "
                           "owners, ranked phase): their decisions are kept, superseded, in "
                           "the exports; the count and reason are logged",
                   request=RESCREEN, examples=[OpenApiExample(
                       "Re-screen the records at full text", request_only=True,
                       value={"filter": {"stage": "full_text"},
                              "reason": "The eligibility criteria changed"})], responses=None)
    def post(self, request: Request, pk: int) -> Response:
        session, body = _session(request, pk), _body(request)
        policy.require(user=request.user, action=policy.Action.RESCREEN, obj=session)
        sight = visibility.session_sight(user=request.user, session=session)
        try:
            done = rescreen.records_rescreen(
                user=request.user, session=session, reason=str(body.get("reason") or ""),
                record_ids=_rescreen_ids(session=session, sight=sight, body=body))
        except (ScreeningError, ValueError, TypeError) as exc:
            raise ValidationError({"detail": str(exc)}) from None
        return Response({"id": done.pk, "records": done.record_count, "reason": done.reason})


urlpatterns = [
    path("screening/<int:pk>/records/", RecordListApi.as_view(), name="screening_records"),
    path("screening/<int:pk>/tags/", TagListApi.as_view(), name="screening_tags"),
    path("screening/<int:pk>/record-tags/", RecordTagApi.as_view(),
         name="screening_record_tags"),
    path("screening/<int:pk>/records/<int:record_id>/tags/<int:tag_id>/",
         RecordTagDetailApi.as_view(), name="screening_record_tag"),
    path("screening/<int:pk>/rescreen/", RescreenApi.as_view(), name="screening_rescreen"),
]
