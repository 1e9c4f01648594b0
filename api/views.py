from __future__ import annotations

from django.conf import settings
from django.db.models import Prefetch
from django.http import FileResponse, HttpResponseBase
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import serializers as s
from classification import ml_models, services
from classification.batches import selectors as batch_selectors
from classification.batches import services as batch_services
from classification.models import BatchJob, MLModel, TrainingJob
from classification.views.batches import result_download_name
from classification.views.jobs import PROGRESS_FIELDS, progress_payload
from dataset_management import selectors as dataset_selectors
from dataset_management import services as dataset_services
from dataset_management.models import Dataset
from dataset_management.readers import DatasetFileError
from web.model_paths import model_path_problem

# --- Datasets ------------------------------------------------------------------------------------


class DatasetListCreateApi(generics.ListAPIView):
    """Your datasets, newest first; POST a file (multipart) to import one."""

    serializer_class = s.DatasetOutputSerializer
    parser_classes = [MultiPartParser, FormParser]

    def get_queryset(self):
        return Dataset.objects.filter(owner=self.request.user).defer("report")

    @extend_schema(request=s.DatasetUploadSerializer, responses={201: s.DatasetDetailSerializer})
    def post(self, request: Request) -> Response:
        data = s.DatasetUploadSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        uploaded = data.validated_data["file"]
        if uploaded.size > settings.MAX_UPLOAD_SIZE:
            raise ValidationError({"file": [
                f"The file is {uploaded.size / 1048576:.1f} MB; the limit is "
                f"{settings.MAX_UPLOAD_SIZE / 1048576:.0f} MB."
            ]})
        kwargs = {}
        if data.validated_data.get("split_ratios"):
            kwargs["split_ratios"] = tuple(data.validated_data["split_ratios"])
        try:
            dataset = dataset_services.dataset_create_from_upload(
                owner=request.user,
                uploaded_file=uploaded,
                name=data.validated_data.get("name") or uploaded.name,
                description=data.validated_data.get("description", ""),
                mapping=data.validated_data.get("mapping") or None,
                seed=data.validated_data.get("seed", 42),
                **kwargs,
            )
        except (DatasetFileError, ValueError) as exc:
            raise ValidationError({"file": [str(exc)]}) from exc
        return Response(s.DatasetDetailSerializer(dataset).data, status=status.HTTP_201_CREATED)


class DatasetDetailApi(APIView):
    @extend_schema(responses=s.DatasetDetailSerializer)
    def get(self, request: Request, pk: int) -> Response:
        return Response(s.DatasetDetailSerializer(_owned_dataset(request, pk)).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, pk: int) -> Response:
        dataset_services.dataset_delete(dataset=_owned_dataset(request, pk))
        return Response(status=status.HTTP_204_NO_CONTENT)


def _owned_dataset(request: Request, pk: int) -> Dataset:
    try:
        dataset = dataset_selectors.dataset_get(owner=request.user, pk=pk)
    except Dataset.DoesNotExist:
        dataset = None
    if dataset is None:
        raise NotFound("No such dataset.")
    return dataset


# --- Models and training ----------------------------------------------------------------------


def _start_training(request: Request) -> TrainingJob:
    data = s.TrainingStartSerializer(data=request.data)
    data.is_valid(raise_exception=True)
    dataset = Dataset.objects.filter(owner=request.user, pk=data.validated_data["dataset"]).first()
    if dataset is None:
        raise ValidationError({"dataset": ["No such dataset."]})
    if not dataset.is_trainable:
        raise ValidationError({"dataset": ["This dataset needs at least two labels to train on."]})
    model_type = data.validated_data["model_type"]
    config = data.validated_data.get("config") or {}
    if not isinstance(config, dict):
        raise ValidationError({"config": ["Must be a JSON object."]})
    problem = model_path_problem(str(config.get("model_path") or ""))
    if problem:
        raise ValidationError({"config": [f"model_path: {problem}"]})
    if model_type == "custom" and not config.get("model_path"):
        raise ValidationError({"config": ["The custom type needs model_path, a local folder."]})
    try:
        return services.training_job_create(
            owner=request.user,
            dataset=dataset,
            model_type=model_type,
            name=data.validated_data.get("name") or f"{dataset.name} · {model_type}",
            config=config,
        )
    except (ValueError, ml_models.ModelUnavailableError) as exc:
        raise ValidationError({"detail": str(exc)}) from exc


class ModelListCreateApi(generics.ListAPIView):
    """Your models; POST starts training a new one (same as POST /api/jobs/)."""

    serializer_class = s.ModelOutputSerializer

    def get_queryset(self):
        return (
            MLModel.objects.filter(owner=self.request.user)
            .defer("metrics", "device_plan", "library_versions")
            .prefetch_related(Prefetch(
                "training_jobs",
                queryset=TrainingJob.objects.only("id", "ml_model_id", "created_at")
                .order_by("-created_at"),
                to_attr="prefetched_jobs",
            ))
        )

    @extend_schema(request=s.TrainingStartSerializer, responses={201: s.JobOutputSerializer})
    def post(self, request: Request) -> Response:
        job = _start_training(request)
        return Response(s.JobOutputSerializer(job).data, status=status.HTTP_201_CREATED)


def _owned_model(request: Request, pk: int) -> MLModel:
    return get_object_or_404(MLModel, pk=pk, owner=request.user)


class ModelDetailApi(APIView):
    @extend_schema(responses=s.ModelDetailSerializer)
    def get(self, request: Request, pk: int) -> Response:
        return Response(s.ModelDetailSerializer(_owned_model(request, pk)).data)

    @extend_schema(responses={204: None, 409: OpenApiResponse(
        description="a training or batch of this model is still active")})
    def delete(self, request: Request, pk: int) -> Response:
        """Delete the model, its artifact and its jobs' checkpoints (files go after commit)."""
        try:
            services.mlmodel_delete(ml_model=_owned_model(request, pk))
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ModelMetricsApi(APIView):
    @extend_schema(responses={200: OpenApiResponse(
        description="The full metrics dict: micro_f1, macro_f1, accuracy or subset_accuracy, "
        "per_label, confusion, confident_mistakes",
    )})
    def get(self, request: Request, pk: int) -> Response:
        model = _owned_model(request, pk)
        return Response({"model": model.pk, "status": model.status, "metrics": model.metrics or {}})


class ModelPredictApi(APIView):
    """Classify one text (`text`), many (`texts`) or title+abstract pairs (`articles`).

    Up to SYNC_PREDICT_MAX_TEXTS (default 64) texts are answered inline with 200. More become a
    batch job on the inference worker: 202 with the batch, its `Location`, and a `result_url`
    (the CSV) to fetch once its status is `completed`.
    """

    parser_classes = [JSONParser]

    @extend_schema(request=s.PredictInputSerializer, responses={
        200: s.PredictOutputSerializer, 202: s.BatchJobOutputSerializer,
    })
    def post(self, request: Request, pk: int) -> Response:
        model = _owned_model(request, pk)
        if not model.is_trained:
            raise ValidationError({"detail": "This model is not trained yet."})
        data = s.PredictInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        texts = data.texts_to_classify()
        if len(texts) > settings.SYNC_PREDICT_MAX_TEXTS:
            return self._as_batch(request, model, data, texts)
        try:
            predictions = services.mlmodel_predict(ml_model=model, texts=texts)
        except ValueError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return Response({"model": model.pk, "predictions": predictions})

    def _as_batch(self, request: Request, model: MLModel, data: s.PredictInputSerializer,
                  texts: list[str]) -> Response:
        # The same refusal the inline path gives, before anything is queued.
        empty = [i for i, text in enumerate(texts, start=1) if not text.strip()]
        if empty:
            raise ValidationError({"detail": f"Text {empty[0]} of {len(texts)} is empty; every "
                                             "text needs a title or an abstract."})
        try:
            batch = batch_services.batch_job_create_from_records(
                owner=request.user, ml_model=model, records=data.records_for_batch(),
                filename="predict-request",
            )
        except batch_services.BatchError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return _batch_accepted(request, batch, detail=(
            f"{len(texts)} texts are more than {settings.SYNC_PREDICT_MAX_TEXTS} "
            "(SYNC_PREDICT_MAX_TEXTS), so they are classified as a batch job: poll `url` until "
            "`is_active` is false, then fetch `result_url` (CSV)."
        ))


# --- Batches --------------------------------------------------------------------------------------


def _batch_accepted(request: Request, batch: BatchJob, *, detail: str = "") -> Response:
    body = s.BatchJobOutputSerializer(batch).data
    if detail:
        body = {**body, "detail": detail}
    response = Response(body, status=status.HTTP_202_ACCEPTED)
    response["Location"] = request.build_absolute_uri(body["url"])
    return response


def _owned_batch(request: Request, batch_id: str) -> BatchJob:
    batch = batch_selectors.batch_job_get(owner=request.user, batch_id=batch_id)
    if batch is None:
        raise NotFound("No such batch.")
    return batch


class ModelBatchCreateApi(APIView):
    """POST a file of articles (multipart `file`): it is classified on the inference worker."""

    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(request=s.BatchUploadSerializer, responses={202: s.BatchJobOutputSerializer})
    def post(self, request: Request, pk: int) -> Response:
        model = _owned_model(request, pk)
        data = s.BatchUploadSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            batch = batch_services.batch_job_create(
                owner=request.user, ml_model=model, uploaded_file=data.validated_data["file"]
            )
        except batch_services.BatchError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return _batch_accepted(request, batch)


class BatchListApi(generics.ListAPIView):
    """Your batch classifications, newest first."""

    serializer_class = s.BatchJobOutputSerializer

    def get_queryset(self):
        return batch_selectors.batch_job_list(owner=self.request.user)


class BatchDetailApi(APIView):
    """One batch: cheap enough to poll every second."""

    @extend_schema(responses=s.BatchJobOutputSerializer)
    def get(self, request: Request, batch_id: str) -> Response:
        return Response(s.BatchJobOutputSerializer(_owned_batch(request, batch_id)).data)


class BatchCancelApi(APIView):
    @extend_schema(request=None, responses={202: s.BatchJobOutputSerializer})
    def post(self, request: Request, batch_id: str) -> Response:
        batch = _owned_batch(request, batch_id)
        if not batch.is_active:
            raise ValidationError({"detail": f"The batch is {batch.status}; only queued or "
                                             "running batches can be cancelled."})
        batch = batch_services.batch_job_cancel(batch=batch)
        return Response(s.BatchJobOutputSerializer(batch).data, status=status.HTTP_202_ACCEPTED)


class BatchResultApi(APIView):
    """The finished CSV: one row per article in file order, labels and probabilities."""

    @extend_schema(responses={
        (200, "text/csv"): OpenApiResponse(description="The predictions as CSV"),
        409: OpenApiResponse(description="The batch has not completed"),
    })
    def get(self, request: Request, batch_id: str) -> HttpResponseBase:
        batch = _owned_batch(request, batch_id)
        path = batch_selectors.batch_job_result_file(batch=batch)
        if path is None:
            return Response(
                {"detail": f"The batch is {batch.status}; the CSV exists once it is completed.",
                 "status": batch.status},
                status=status.HTTP_409_CONFLICT,
            )
        return FileResponse(path.open("rb"), as_attachment=True, content_type="text/csv",
                            filename=result_download_name(batch))


# --- Jobs ---------------------------------------------------------------------------------------


class JobListCreateApi(generics.ListAPIView):
    """Your training jobs; POST starts one."""

    serializer_class = s.JobOutputSerializer

    def get_queryset(self):
        return TrainingJob.objects.filter(ml_model__owner=self.request.user).defer(
            "metrics_history", "log_tail"
        )

    @extend_schema(request=s.TrainingStartSerializer, responses={201: s.JobOutputSerializer})
    def post(self, request: Request) -> Response:
        job = _start_training(request)
        return Response(s.JobOutputSerializer(job).data, status=status.HTTP_201_CREATED)


class JobStatusApi(APIView):
    """Live status of one job: cheap enough to poll every second."""

    @extend_schema(responses=s.JobStatusSerializer)
    def get(self, request: Request, pk: int) -> Response:
        row = (
            TrainingJob.objects.filter(pk=pk, ml_model__owner_id=request.user.pk)
            .values(*PROGRESS_FIELDS, "metrics_history")
            .first()
        )
        if row is None:
            raise NotFound("No such job.")
        since = request.query_params.get("since", "0")
        return Response(progress_payload(row, since=int(since) if since.isdigit() else 0))


def _owned_job(request: Request, pk: int) -> TrainingJob:
    return get_object_or_404(TrainingJob, pk=pk, ml_model__owner=request.user)


class JobCancelApi(APIView):
    @extend_schema(request=None, responses=s.JobOutputSerializer)
    def post(self, request: Request, pk: int) -> Response:
        job = _owned_job(request, pk)
        if not job.is_active:
            raise ValidationError({"detail": f"The job is {job.status}; only queued or running "
                                             "jobs can be cancelled."})
        services.training_job_cancel(job=job)
        job.refresh_from_db()
        return Response(s.JobOutputSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class JobResumeApi(APIView):
    @extend_schema(request=None, responses=s.JobOutputSerializer)
    def post(self, request: Request, pk: int) -> Response:
        job = _owned_job(request, pk)
        if not job.is_resumable:
            raise ValidationError({"detail": f"The job is {job.status}; only failed, stalled or "
                                             "cancelled jobs can be resumed."})
        try:
            resumed = services.training_job_resume(job=job)
        except ValueError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        if not isinstance(resumed, TrainingJob):
            job.refresh_from_db()
            resumed = job
        return Response(s.JobOutputSerializer(resumed).data, status=status.HTTP_202_ACCEPTED)
