"""Prior knowledge and skipping over the API: the same services as the pages.

POST /api/screening/<id>/priors/ marks records known relevant or irrelevant for a label
(maintainers and owners, ranked phase), chosen by exactly one of `query`, `record_ids`,
`pmids` or a multipart `file` of included studies; GET lists the priors (paged); DELETE
/api/screening/<id>/priors/<prior>/ removes one (logged). POST /api/screening/<id>/skip/
sets a record aside for you; GET lists your skipped records.
"""

from __future__ import annotations

from typing import Any

from django.urls import path
from drf_spectacular.utils import OpenApiExample, extend_schema, inline_serializer
from rest_framework import generics, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from projects import policy
from screening import api_schema, priors, selectors, skip
from screening.api import conflict_response
from screening.errors import ScreeningConflict, ScreeningError

PRIORS = inline_serializer("ScreeningPriorsRequest", fields={
    "label": serializers.CharField(help_text="One of the session's labels"),
    "value": serializers.ChoiceField(choices=["yes", "no"],
                                     help_text="yes: known relevant; no: known irrelevant"),
    "query": serializers.CharField(required=False, help_text="Records whose title, abstract, "
                                   "authors, keywords or id hold this text"),
    "record_ids": serializers.ListField(child=serializers.IntegerField(), required=False),
    "pmids": serializers.ListField(child=serializers.CharField(), required=False),
    "file": serializers.FileField(required=False, help_text="Included studies (RIS, CSV, "
                                  "PubMed XML...), matched by PMID, DOI, then title; multipart"),
})
SKIP = inline_serializer("ScreeningSkipRequest", fields={
    "record": serializers.IntegerField(help_text="The record's id"),
})


def _session(request: Request, pk: int) -> Any:
    return selectors.session_get(user=request.user, pk=pk)


class PriorListApi(generics.GenericAPIView):
    @extend_schema(summary="The session's prior knowledge: records marked known relevant or "
                           "irrelevant before screening, in the records' order (paged: "
                           "`{count, next, previous, results}`, `?page=`)",
                   responses=api_schema.PRIOR_ROWS)
    def get(self, request: Request, pk: int) -> Response:
        session = _session(request, pk)
        policy.require(user=request.user, action=policy.Action.MANAGE_SCREENING, obj=session)
        # The records' order, label by label: the same on every request, so it pages.
        page = self.paginate_queryset(priors.prior_list(session=session))
        return self.get_paginated_response([priors.prior_payload(p) for p in page])

    @extend_schema(summary="Mark records known relevant (yes) or irrelevant (no) for a label "
                           "(maintainers and owners, ranked phase; logged): by `query`, "
                           "`record_ids`, `pmids` or a `file`; records already screened are "
                           "left as they are, listed in `left`",
                   request=PRIORS, examples=[OpenApiExample(
                       "Known relevant, by a search", request_only=True,
                       value={"label": "oncological", "value": "yes", "query": "cancer"})],
                   responses=None)
    def post(self, request: Request, pk: int) -> Response:
        session = _session(request, pk)
        try:
            done = priors.priors_post(user=request.user, session=session, data=request.data,
                               upload=request.FILES.get("file"))
        except ScreeningConflict as exc:
            return conflict_response(exc)
        except ScreeningError as exc:
            raise ValidationError({"detail": str(exc)}) from None
        return Response(done, status=status.HTTP_201_CREATED)


class PriorDetailApi(APIView):
    @extend_schema(summary="Remove a prior (logged); refused with 409 if the record's "
                           "full-text work would be left behind", responses=None)
    def delete(self, request: Request, pk: int, prior_id: int) -> Response:
        session = _session(request, pk)
        try:
            removed = priors.prior_remove(user=request.user, session=session, prior_id=prior_id)
        except ScreeningConflict as exc:
            return conflict_response(exc)
        except ScreeningError as exc:
            raise ValidationError({"detail": str(exc)}) from None
        return Response({"removed": removed.pk})


class SkipApi(APIView):
    @extend_schema(summary="Your skipped records, the earliest first: they come back once the "
                           "others are read", responses=None)
    def get(self, request: Request, pk: int) -> Response:
        session = _session(request, pk)
        return Response(skip.skipped_payload(user=request.user, session=session))

    @extend_schema(summary="Set a record aside for you; it comes back after the others and is "
                           "never counted as decided", request=SKIP, examples=[
                               OpenApiExample("Skip a record", request_only=True,
                                              value={"record": 1})], responses=None)
    def post(self, request: Request, pk: int) -> Response:
        session = _session(request, pk)
        body = request.data if isinstance(request.data, dict) else {}
        try:
            record = selectors.record_get(user=request.user, session=session,
                                          pk=int(body.get("record") or 0))
            skip.record_skip(user=request.user, record=record)
        except (ScreeningError, ValueError, TypeError) as exc:
            raise ValidationError({"detail": str(exc)}) from None
        return Response(skip.skipped_payload(user=request.user, session=session))


urlpatterns = [
    path("screening/<int:pk>/priors/", PriorListApi.as_view(), name="screening_priors"),
    path("screening/<int:pk>/priors/<int:prior_id>/", PriorDetailApi.as_view(),
         name="screening_prior"),
    path("screening/<int:pk>/skip/", SkipApi.as_view(), name="screening_skip"),
]
