"""GET /api/models/<id>/export/: the model as a zip of a folder that loads without MedLitBot
(Hugging Face or skops files, postprocess.json, predict.py and a README.md model card)."""

from __future__ import annotations

from django.http import HttpResponseBase, StreamingHttpResponse
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.ownership import Action, model_get
from classification.mlmodels.export import ExportRefused, mlmodel_export_stream


class ModelExportApi(APIView):
    """The trained model as a folder a user loads without MedLitBot: a transformer as a Hugging
    Face folder (with onnx/model.onnx where the ONNX export works), a TF-IDF model as a skops
    Pipeline; postprocess.json and predict.py reproduce the app's calibration and decision
    rules, and README.md is its model card. Any project member may download it."""

    def perform_content_negotiation(self, request: Request, force: bool = False):
        # The answer is a zip, or a JSON refusal: no renderer is negotiated.
        renderer = JSONRenderer()
        return renderer, renderer.media_type

    @extend_schema(
        operation_id="models_export",
        responses={(200, "application/zip"): OpenApiResponse(
            OpenApiTypes.BINARY, "A zip of one folder: the model's files, postprocess.json, "
            "predict.py and README.md (the model card)"),
            409: OpenApiResponse(description="The model is not trained, or its kind (an "
                                 "ensemble, an embedding model) cannot be exported faithfully: "
                                 "`detail` says why")})
    def get(self, request: Request, pk: int) -> HttpResponseBase:
        model = model_get(request, pk, action=Action.DOWNLOAD)
        try:
            filename, stream = mlmodel_export_stream(ml_model=model)
        except ExportRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        response = StreamingHttpResponse(stream, content_type="application/zip")
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response


urlpatterns = [
    path("models/<int:pk>/export/", ModelExportApi.as_view(), name="model_export"),
]
