"""Screening over the API: sessions (with agreement and stopping), the next record, a decision,
conflicts and their resolution, and the exports. The same selectors and services as the pages;
a session outside your projects is a 404, an action above your role a 403 naming the role."""

from __future__ import annotations

from typing import Any

from django.http import StreamingHttpResponse
from django.urls import path, re_path
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from projects import policy
from screening import export, selectors, services


def _session(request: Request, pk: int, action: str = policy.Action.VIEW) -> Any:
    return selectors.session_get(user=request.user, pk=pk, action=action)


class SessionListApi(APIView):
    @extend_schema(summary="Screening sessions in your projects", responses=None)
    def get(self, request: Request) -> Response:
        return Response([{"id": s.pk, "name": s.name, "project": s.project_id,
                          "labels": s.labels, "phase": s.phase}
                         for s in selectors.session_list(user=request.user)])


class SessionDetailApi(APIView):
    @extend_schema(summary="A session: progress, agreement per label, stopping", responses=None)
    def get(self, request: Request, pk: int) -> Response:
        return Response(selectors.session_summary(session=_session(request, pk)))


class NextRecordApi(APIView):
    @extend_schema(summary="The next record for you (blind to other reviewers)", responses=None)
    def get(self, request: Request, pk: int) -> Response:
        session = _session(request, pk, policy.Action.SCREEN)
        record = selectors.record_next(user=request.user, session=session)
        return Response({"record": record and selectors.record_payload(record=record,
                                                                       user=request.user)})


class DecideApi(APIView):
    @extend_schema(summary="Decide yes/no/unsure per label for a record", request=None,
                   responses=None)
    def post(self, request: Request, pk: int) -> Response:
        session = _session(request, pk, policy.Action.SCREEN)
        try:
            record = selectors.record_get(user=request.user, session=session,
                                          pk=int(request.data.get("record", 0)))
            services.decision_record(user=request.user, record=record,
                                     values=dict(request.data.get("values") or {}),
                                     note=str(request.data.get("note") or ""))
        except (ValueError, TypeError) as exc:
            raise ValidationError({"detail": str(exc)}) from None
        record.refresh_from_db()
        return Response({"record": record.pk, "final": record.final, "done": record.done})


class ConflictsApi(APIView):
    @extend_schema(summary="Conflicts, and a maintainer's resolution", request=None,
                   responses=None)
    def get(self, request: Request, pk: int) -> Response:
        session = _session(request, pk)
        return Response([{"record": c["record"].pk, "label": c["label"], "decisions": [
            {"reviewer": d.reviewer.get_username(), "value": d.value, "note": d.note}
            for d in c["decisions"]]} for c in selectors.conflicts_list(session=session)])

    def post(self, request: Request, pk: int) -> Response:
        session = _session(request, pk)
        try:
            record = selectors.record_get(user=request.user, session=session,
                                          pk=int(request.data.get("record", 0)))
            services.conflict_resolve(user=request.user, record=record,
                                      label=str(request.data.get("label", "")),
                                      value=str(request.data.get("value", "")),
                                      note=str(request.data.get("note") or ""))
        except (ValueError, TypeError) as exc:
            raise ValidationError({"detail": str(exc)}) from None
        record.refresh_from_db()
        return Response({"record": record.pk, "final": record.final, "done": record.done})


class ExportApi(APIView):
    @extend_schema(summary="Decisions as csv, ris or jsonl; prisma counts", responses=None)
    def get(self, request: Request, pk: int, fmt: str) -> Any:
        session = _session(request, pk, policy.Action.DOWNLOAD)
        if fmt == "prisma":
            return Response(export.prisma_counts(session))
        writer = {"csv": export.export_csv, "ris": export.export_ris,
                  "jsonl": export.export_jsonl}[fmt]
        return StreamingHttpResponse(writer(session), content_type="text/plain; charset=utf-8")


urlpatterns = [
    path("screening/", SessionListApi.as_view(), name="screening_list"),
    path("screening/<int:pk>/", SessionDetailApi.as_view(), name="screening_detail"),
    path("screening/<int:pk>/next/", NextRecordApi.as_view(), name="screening_next"),
    path("screening/<int:pk>/decide/", DecideApi.as_view(), name="screening_decide"),
    path("screening/<int:pk>/conflicts/", ConflictsApi.as_view(), name="screening_conflicts"),
    re_path(r"^screening/(?P<pk>[0-9]+)/export/(?P<fmt>csv|ris|jsonl|prisma)/$",
            ExportApi.as_view(), name="screening_export"),
]
