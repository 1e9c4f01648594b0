"""The API's batch classifications: create from a file, list, poll, cancel, download.

A batch belongs to its model's project: classifying needs the reviewer role there, cancelling the
maintainer's, downloading the viewer's (projects.policy).
"""

from __future__ import annotations

from django.http import HttpResponseBase
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import batch_serializers as s
from api.ownership import PROJECT_PARAMETER, Action, batch_get, model_get, project_narrowed
from classification.batches import exports as batch_exports
from classification.batches import selectors as batch_selectors
from classification.batches import services as batch_services
from dataset_management.export import CONTENT_TYPES, EXPORT_FORMATS, export_response


def batch_accepted(request: Request, body: dict) -> Response:
    """202 with the batch and a Location to poll: also the predict endpoint's answer above
    SYNC_PREDICT_MAX_TEXTS."""
    response = Response(body, status=status.HTTP_202_ACCEPTED)
    response["Location"] = request.build_absolute_uri(body["url"])
    return response


class ModelBatchCreateApi(APIView):
    """POST a file of articles (multipart `file`): it is classified on the inference worker."""

    parser_classes = [MultiPartParser]  # a file cannot travel in a urlencoded form

    @extend_schema(request=s.BatchUploadSerializer, responses={202: s.BatchSerializer})
    def post(self, request: Request, pk: int) -> Response:
        model = model_get(request, pk, action=Action.CLASSIFY)
        data = s.BatchUploadSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            batch = batch_services.batch_job_create(
                owner=request.user, ml_model=model, uploaded_file=data.validated_data["file"],
                top_terms=data.validated_data["top_terms"],
                threshold=data.validated_data["threshold"],
            )
        except batch_services.BatchError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return batch_accepted(request, s.BatchSerializer(batch).data)


class BatchListApi(generics.ListAPIView):
    """The batch classifications of your projects, newest first (`?project=` narrows to one);
    a batch has the same keys here, in its detail and in the 202 of its create and cancel."""

    serializer_class = s.BatchSerializer

    def get_queryset(self):
        return batch_selectors.batch_job_list(user=self.request.user,
                                              project=project_narrowed(self.request))

    @extend_schema(parameters=[PROJECT_PARAMETER])
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)


class BatchDetailApi(APIView):
    """One batch: cheap enough to poll every second. DELETE removes a finished one now."""

    @extend_schema(responses=s.BatchSerializer)
    def get(self, request: Request, batch_id: str) -> Response:
        return Response(s.BatchSerializer(batch_get(request, batch_id)).data)

    @extend_schema(request=None, responses={
        204: None, 409: OpenApiResponse(description="Still queued or running: cancel it first"),
    })
    def delete(self, request: Request, batch_id: str) -> Response:
        batch = batch_get(request, batch_id, action=Action.DELETE)
        try:
            batch_services.batch_job_delete(batch=batch, actor=request.user)
        except batch_services.BatchError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(status=status.HTTP_204_NO_CONTENT)


class BatchCancelApi(APIView):
    @extend_schema(request=None, responses={
        202: s.BatchSerializer,
        400: OpenApiResponse(description="The batch has already ended"),
    })
    def post(self, request: Request, batch_id: str) -> Response:
        batch = batch_get(request, batch_id, action=Action.CANCEL)
        if not batch.is_active:
            raise ValidationError({"detail": f"The batch is {batch.status}; only queued or "
                                             "running batches can be cancelled."})
        batch = batch_services.batch_job_cancel(batch=batch, actor=request.user)
        return Response(s.BatchSerializer(batch).data, status=status.HTTP_202_ACCEPTED)


class BatchResultApi(APIView):
    """The finished results in file order: ?format=csv (the default), ris (every original record,
    the labels as keywords) or jsonl (identifiers, fields, record, labels, probabilities)."""

    def perform_content_negotiation(self, request: Request, force: bool = False):
        # Here ?format= names the file, not a DRF renderer; answers other than the file are JSON.
        renderer = JSONRenderer()
        return renderer, renderer.media_type

    @extend_schema(parameters=[OpenApiParameter(
        "format", OpenApiTypes.STR, enum=list(EXPORT_FORMATS), default="csv")],
        responses={(200, t): OpenApiResponse(OpenApiTypes.BINARY, "The results as asked")
                   for t in CONTENT_TYPES.values()} | {
            400: OpenApiResponse(description="An unknown format"),
            409: OpenApiResponse(description="The batch has not completed")})
    def get(self, request: Request, batch_id: str) -> HttpResponseBase:
        batch = batch_get(request, batch_id, action=Action.DOWNLOAD)
        fmt = request.query_params.get("format") or "csv"
        if fmt not in EXPORT_FORMATS:
            raise ValidationError({"format": [f"Choose from: {', '.join(EXPORT_FORMATS)}."]})
        try:
            export = batch_exports.batch_job_export(batch=batch, fmt=fmt)
        except batch_exports.ExportUnavailable as exc:
            raise NotFound(str(exc)) from None
        if export is None:
            return Response(
                {"detail": f"The batch is {batch.status}; the results exist once it is completed.",
                 "status": batch.status},
                status=status.HTTP_409_CONFLICT,
            )
        return export_response(export)
