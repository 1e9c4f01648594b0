"""The full-text stage over the API (issue 35). `POST /api/screening/<id>/fulltext/<record>/`
with a multipart `file` keeps the report's PDF and its extracted text (201); `GET` on the same
path answers `text_chars` and the stage's decisions, as the caller's sight allows (blind: a
reviewer sees their own). `.../decide/` (values, reasons, note), `.../not-retrieved/` (reason);
`GET /api/screening/<id>/fulltext/` lists the records at full text, paged like every API list
(`{count, next, previous, results}`, `?page=`). A decision on a report not retrieved yet, or
marked not retrieved, answers 409 saying what to do first."""

from __future__ import annotations

from typing import Any

from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from screening import api_schema as request_bodies
from screening import fulltext, fulltext_selectors, selectors, visibility
from screening.api import conflict_response
from screening.errors import ScreeningConflict, ScreeningError


def _record(request: Request, pk: int, record: int) -> tuple[Any, list[str]]:
    session = selectors.session_get(user=request.user, pk=pk)
    return fulltext_selectors.fulltext_record_get(user=request.user, session=session,
                                                  pk=record)


def _state(request: Request, found: tuple[Any, list[str]]) -> dict[str, Any]:
    record, labels = found
    record.refresh_from_db()
    return fulltext_selectors.fulltext_state(user=request.user, record=record, labels=labels)


class FullTextListApi(generics.GenericAPIView):
    @extend_schema(summary="The records at full text, in the records' order, with their labels "
                           "there, the report's status and the record's state (paged: "
                           "`{count, next, previous, results}`, `?page=`)",
                   responses=request_bodies.FULLTEXT_ROWS)
    def get(self, request: Request, pk: int) -> Response:
        session = selectors.session_get(user=request.user, pk=pk)
        visibility.fulltext_require_open(user=request.user, session=session)  # 403 while blind
        sight = visibility.session_sight(user=request.user, session=session)
        # The records' order, the same on every request, so it pages.
        found = self.paginate_queryset(fulltext_selectors.fulltext_records(session=session))
        return self.get_paginated_response([
            {"record": record.pk, "labels": labels,
             "title": visibility.record_title_shown(record=record),
             "status": getattr(getattr(record, "fulltext", None), "status", "sought"),
             "state": record.state if sight.finals_shown else None,
             "final": ({k: v for k, v in record.fulltext_final.items() if k in labels}
                       if sight.finals_shown else None)}
            for record, labels in found])


class FullTextRecordApi(APIView):
    parser_classes = [MultiPartParser, FormParser, JSONParser]

    @extend_schema(summary="A record's full-text report: status, text_chars, pages, and the "
                           "stage's decisions you may see", responses=None)
    def get(self, request: Request, pk: int, record: int) -> Response:
        return Response(_state(request, _record(request, pk, record)))

    @extend_schema(summary="Attach the report's PDF (multipart `file`): kept with its text "
                           "(201), or 400 naming the bound it broke, nothing kept",
                   request=request_bodies.FULLTEXT_ATTACH, responses=None)
    def post(self, request: Request, pk: int, record: int) -> Response:
        found = _record(request, pk, record)
        upload = request.FILES.get("file")
        if upload is None:
            raise ValidationError({"file": ["Send the report's PDF as a multipart `file`."]})
        try:
            fulltext.fulltext_report_attach(user=request.user, record=found[0],
                                            uploaded_file=upload)
        except ScreeningError as exc:
            raise ValidationError({"detail": str(exc)}) from None
        return Response(_state(request, found), status=status.HTTP_201_CREATED)


class FullTextDecideApi(APIView):
    @extend_schema(summary="Your yes/no per label at full text; a no needs `reasons[label]`, "
                           "one of the session's exclusion reasons; 409 unless the report is "
                           "retrieved",
                   request=request_bodies.FULLTEXT_DECIDE,
                   examples=request_bodies.FULLTEXT_DECIDE_EXAMPLES, responses=None)
    def post(self, request: Request, pk: int, record: int) -> Response:
        found = _record(request, pk, record)
        try:
            fulltext.fulltext_decision_record(
                user=request.user, record=found[0], values=dict(request.data.get("values") or {}),
                reasons=dict(request.data.get("reasons") or {}),
                note=str(request.data.get("note") or "")[:2000])
        except ScreeningConflict as exc:
            return conflict_response(exc)
        except (ScreeningError, TypeError, ValueError) as exc:
            raise ValidationError({"detail": str(exc)}) from None
        return Response(_state(request, found))


class FullTextNotRetrievedApi(APIView):
    @extend_schema(summary="Mark the report not retrieved, with a `reason`",
                   request=request_bodies.NOT_RETRIEVED,
                   examples=request_bodies.NOT_RETRIEVED_EXAMPLES, responses=None)
    def post(self, request: Request, pk: int, record: int) -> Response:
        found = _record(request, pk, record)
        try:
            fulltext.fulltext_not_retrieved(user=request.user, record=found[0],
                                            reason=str(request.data.get("reason") or ""))
        except ScreeningConflict as exc:
            return conflict_response(exc)
        except ScreeningError as exc:
            raise ValidationError({"detail": str(exc)}) from None
        return Response(_state(request, found))


urlpatterns = [
    path("screening/<int:pk>/fulltext/", FullTextListApi.as_view(), name="screening_fulltext"),
    path("screening/<int:pk>/fulltext/<int:record>/", FullTextRecordApi.as_view(),
         name="screening_fulltext_record"),
    path("screening/<int:pk>/fulltext/<int:record>/decide/", FullTextDecideApi.as_view(),
         name="screening_fulltext_decide"),
    path("screening/<int:pk>/fulltext/<int:record>/not-retrieved/",
         FullTextNotRetrievedApi.as_view(), name="screening_fulltext_not_retrieved"),
]
