"""The API's evaluations: a trained model scored on a labelled file, on the inference worker.

POST a file to a model's evaluations: 202 with the job and a Location to poll; GET the job until
`is_active` is false, then read `result` (the metrics, the columns used, the labels the model
does not know, and `training_overlap` with `overlap_warning`). Evaluating runs the model, so it
needs the reviewer role in the model's project, as classifying does (projects.policy).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.ownership import Action, model_get
from api.serializers import UploadField
from classification import services
from classification.mlmodels import evaluation_selectors as selectors
from classification.models import EvaluationJob
from dataset_management.readers import FORMATS_SENTENCE


class EvaluationUploadSerializer(serializers.Serializer):
    file = UploadField(help_text=f"Labelled articles in any format a dataset import reads "
                                 f"({FORMATS_SENTENCE}); every row is test data.")
    title_column = serializers.CharField(required=False, allow_blank=True)
    abstract_column = serializers.CharField(required=False, allow_blank=True)
    text_column = serializers.CharField(
        required=False, allow_blank=True,
        help_text="One free-text column instead of an abstract.")
    label_column = serializers.CharField(required=False, allow_blank=True)
    label_separator = serializers.CharField(
        required=False, allow_blank=True, trim_whitespace=False,
        help_text="Between several labels in one cell; 'none' for one label per cell.")

    def validate(self, attrs: dict) -> dict:
        if attrs.get("abstract_column") and attrs.get("text_column"):
            raise ValidationError("Give abstract_column or text_column, not both.")
        return attrs


class EvaluationSerializer(serializers.ModelSerializer):
    """An evaluation, the same in the list, the detail and the 202 of a create or a cancel."""

    id = serializers.UUIDField(format="hex", read_only=True)
    model_id = serializers.IntegerField(source="ml_model_id", read_only=True)
    model_name = serializers.CharField(source="ml_model.name", read_only=True)
    status_display = serializers.CharField(source="get_status_display", read_only=True)
    phase_display = serializers.SerializerMethodField(
        help_text='Where it stands, e.g. "scoring rows: 512 of 888 rows".')
    progress = serializers.SerializerMethodField(help_text="Percent of rows scored, 0-100.")
    eta_seconds = serializers.SerializerMethodField(help_text="Seconds left; null while unknown.")
    is_active = serializers.BooleanField(read_only=True, help_text="Queued or running.")
    overlap_warning = serializers.SerializerMethodField(
        help_text="How many rows of the file are in the model's train or validation split, in "
                  "words; empty when none are.")
    url = serializers.SerializerMethodField(help_text="This evaluation in the API.")

    class Meta:
        model = EvaluationJob
        fields = [
            "id", "project", "model_id", "model_name", "status", "status_display",
            "phase_display", "filename", "overrides", "total", "processed", "progress",
            "eta_seconds", "is_active", "cancel_requested", "reason", "result",
            "overlap_warning", "created_at", "started_at", "finished_at", "url",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "total": {"help_text": "Rows to score; null while the file is being read."},
            "processed": {"help_text": "Rows scored so far."},
            "result": {"help_text": "The metrics once completed (null before): micro_f1, "
                                    "macro_f1, per_label, n, columns, unknown_labels, "
                                    "training_overlap, ..."},
        }

    def _progress(self, obj: EvaluationJob) -> dict:
        cache = self.context.setdefault("_progress", {})
        if obj.pk not in cache:
            cache[obj.pk] = selectors.evaluation_job_progress(job=obj)
        return cache[obj.pk]

    def get_progress(self, obj: EvaluationJob) -> float:
        return self._progress(obj)["progress"]

    def get_eta_seconds(self, obj: EvaluationJob) -> float | None:
        return self._progress(obj)["eta_seconds"]

    def get_phase_display(self, obj: EvaluationJob) -> str:
        return self._progress(obj)["phase_display"]

    def get_overlap_warning(self, obj: EvaluationJob) -> str:
        from classification.mlmodels.overlap import overlap_warning

        return overlap_warning((obj.result or {}).get("training_overlap"))

    def get_url(self, obj: EvaluationJob) -> str:
        return reverse("api:evaluation_detail", args=[obj.pk.hex])


def _accepted(request: Request, job: EvaluationJob) -> Response:
    body = EvaluationSerializer(job).data
    response = Response(body, status=status.HTTP_202_ACCEPTED)
    response["Location"] = request.build_absolute_uri(body["url"])
    return response


class ModelEvaluationsApi(generics.ListAPIView):
    """GET: the model's evaluations, newest first, paged as every list (`{count, next, previous,
    results}`, `?page=`). POST a labelled file (multipart `file`, and the column options to
    override the training mapping or detection): it is scored on the inference worker; 400 at
    once when its columns cannot be found."""

    serializer_class = EvaluationSerializer
    parser_classes = [MultiPartParser]

    def get_queryset(self):
        model = model_get(self.request, self.kwargs["pk"])
        # The pk breaks ties between evaluations started in the same instant: pages never overlap.
        return selectors.evaluation_job_list(user=self.request.user, ml_model=model).order_by(
            "-created_at", "-pk")

    @extend_schema(request=EvaluationUploadSerializer, responses={
        202: EvaluationSerializer,
        400: OpenApiResponse(description="The file cannot be scored: the reason"),
    })
    def post(self, request: Request, pk: int) -> Response:
        model = model_get(request, pk, action=Action.CLASSIFY)
        data = EvaluationUploadSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data.pop("file")
        name = Path(upload.name or "evaluation").name or "evaluation"
        # The readers need a file on disk; the service copies it into the job's own folder.
        with tempfile.TemporaryDirectory(prefix="medlitbot-evaluate-") as folder:
            source = Path(folder) / "upload"
            with source.open("wb") as out:
                for chunk in upload.chunks():
                    out.write(chunk)
            try:
                job = services.evaluation_job_create(
                    owner=request.user, ml_model=model, source=source, filename=name,
                    overrides=data.validated_data)
            except services.EvaluationError as exc:
                raise ValidationError({"detail": str(exc)}) from exc
        return _accepted(request, job)


class EvaluationDetailApi(APIView):
    """One evaluation: cheap enough to poll every second."""

    @extend_schema(responses=EvaluationSerializer)
    def get(self, request: Request, job_id: str) -> Response:
        job = selectors.evaluation_job_get(user=request.user, job_id=job_id)
        return Response(EvaluationSerializer(job).data)


class EvaluationCancelApi(APIView):
    @extend_schema(request=None, responses={
        202: EvaluationSerializer,
        400: OpenApiResponse(description="The evaluation has already ended"),
    })
    def post(self, request: Request, job_id: str) -> Response:
        job = selectors.evaluation_job_get(user=request.user, job_id=job_id,
                                           action=Action.CANCEL)
        if not job.is_active:
            raise ValidationError({"detail": f"The evaluation is {job.status}; only queued or "
                                             "running evaluations can be cancelled."})
        job = services.evaluation_job_cancel(job=job, actor=request.user)
        return Response(EvaluationSerializer(job).data, status=status.HTTP_202_ACCEPTED)
