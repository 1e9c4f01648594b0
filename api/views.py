from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.db.models import F, OuterRef, QuerySet, Subquery
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import batch_serializers, docs
from api import imports as imports_api
from api import serializers as s
from api.batches import batch_accepted
from api.ownership import (
    PROJECT_PARAMETER,
    Action,
    dataset_get,
    job_get,
    model_get,
    project_narrowed,
    row_get,
    scoped,
)
from api.presenters import model_headline_annotations
from classification import ml_models, services
from classification.batches import services as batch_services
from classification.mlmodels.prediction import mlmodel_calibrated
from classification.models import MLModel, TrainingJob
from dataset_management import imports as dataset_imports
from dataset_management import selectors as dataset_selectors
from dataset_management import services as dataset_services
from dataset_management.models import Dataset
from dataset_management.readers import DatasetFileError
from projects import policy
from projects.models import Project


def _expand(request: Request, allowed: Iterable[str]) -> frozenset[str]:
    """The names in ?expand= (comma-separated or repeated); an unknown one is a 400."""
    names = frozenset(
        name.strip() for value in request.query_params.getlist("expand")
        for name in value.split(",") if name.strip()
    )
    unknown = sorted(names - set(allowed))
    if unknown:
        raise ValidationError({"expand": [
            f"Unknown: {', '.join(unknown)}. Choose from: {', '.join(sorted(allowed))}."
        ]})
    return names


def _location(request: Request, url_name: str, pk: object) -> str:
    """The Location of a created resource, absolute as a batch's 202 gives it."""
    return request.build_absolute_uri(reverse(url_name, args=[pk]))


def _expand_parameter(allowed: dict[str, str]) -> OpenApiParameter:
    return OpenApiParameter(
        "expand", OpenApiTypes.STR, description="Add heavy fields, comma-separated: " + "; ".join(
            f"`{name}` adds {what}" for name, what in allowed.items()
        ),
    )

# --- Datasets ------------------------------------------------------------------------------------


DATASET_EXPAND = {"report": "`report`, the validation report"}


def _dataset_context(request: Request) -> dict:
    return {"request": request, "expand": _expand(request, DATASET_EXPAND)}


class DatasetListCreateApi(generics.ListAPIView):
    """The datasets of your projects, newest first (`?project=` narrows to one); POST a file
    (multipart) to import one, into `project` or else your personal project: a worker reads
    it, so the answer is a 202 with the import to follow (`/api/datasets/imports/<id>/`).

    A dataset has the same keys here and in its detail; `report` is added by
    `?expand=report` on either.
    """

    serializer_class = s.DatasetSerializer
    parser_classes = [MultiPartParser]  # a file cannot travel in a urlencoded form

    def get_serializer_context(self) -> dict:
        return {**super().get_serializer_context(), **_dataset_context(self.request)}

    def get_queryset(self):
        datasets = dataset_selectors.dataset_list(user=self.request.user,
                                                  project=project_narrowed(self.request))
        if "report" in _expand(self.request, DATASET_EXPAND):
            datasets = datasets.defer(None)
        return datasets

    @extend_schema(parameters=[_expand_parameter(DATASET_EXPAND), PROJECT_PARAMETER])
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(request=s.DatasetUploadSerializer,
                   responses={202: imports_api.ImportJobSerializer},
                   examples=docs.DATASET_UPLOAD_EXAMPLES)
    def post(self, request: Request) -> Response:
        """Store the file and queue its import (202 + Location: poll the import until it
        ends, then read its dataset); a file refused at once (its first rows, a duplicate) is
        a 400."""
        data = s.DatasetUploadSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        uploaded = data.validated_data["file"]
        if uploaded.size > settings.MAX_UPLOAD_SIZE:
            raise ValidationError({"file": [
                f"The file is {uploaded.size / 1048576:.1f} MB; the limit is "
                f"{settings.MAX_UPLOAD_SIZE / 1048576:.0f} MB."
            ]})
        project = _upload_project(request, data.validated_data.get("project"))
        kwargs = {}
        if data.validated_data.get("split_ratios"):
            kwargs["split_ratios"] = tuple(data.validated_data["split_ratios"])
        try:
            job = dataset_imports.import_job_create(
                owner=request.user,
                project=project,
                uploaded_file=uploaded,
                name=data.validated_data.get("name") or uploaded.name,
                description=data.validated_data.get("description", ""),
                mapping=data.validated_data.get("mapping") or None,
                seed=data.validated_data.get("seed", 42),
                **kwargs,
            )
        except (DatasetFileError, ValueError) as exc:
            raise ValidationError({"file": [str(exc)]}) from exc
        return imports_api.import_accepted(request, job)


def _upload_project(request: Request, project_id: int | None) -> Project:
    """Where an upload goes (imports_api.upload_project), if the user may upload there."""
    project = imports_api.upload_project(user=request.user, project_id=project_id)
    policy.require(user=request.user, action=Action.UPLOAD, project=project)
    return project


class DatasetDetailApi(APIView):
    @extend_schema(responses=s.DatasetSerializer, parameters=[_expand_parameter(DATASET_EXPAND)])
    def get(self, request: Request, pk: int) -> Response:
        context = _dataset_context(request)
        return Response(s.DatasetSerializer(dataset_get(request, pk), context=context).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, pk: int) -> Response:
        dataset = dataset_get(request, pk, action=Action.DELETE)
        dataset_services.dataset_delete(dataset=dataset, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- Models and training ----------------------------------------------------------------------


def _start_training(request: Request) -> TrainingJob:
    data = s.TrainingStartSerializer(data=request.data, context={"request": request})
    data.is_valid(raise_exception=True)
    dataset = policy.scope(Dataset.objects.all(), user=request.user).filter(
        pk=data.validated_data["dataset"]).first()
    if dataset is None:
        raise ValidationError({"dataset": ["No such dataset."]})
    # The model and its job go to the dataset's project, so training is asked of it there.
    policy.require(user=request.user, action=Action.TRAIN, obj=dataset)
    if not dataset.is_trainable:
        raise ValidationError({"dataset": ["This dataset needs at least two labels to train on."]})
    try:
        return services.training_job_create(
            owner=request.user,
            dataset=dataset,
            model_type=data.validated_data["model_type"],
            name=data.validated_data.get("name") or "",
            config=data.validated_data.get("config") or {},
        )
    except ml_models.TrainConfigError as exc:
        # The service's refusal of a setting (a custom model's folder) shows on that setting.
        raise ValidationError({"config": exc.errors}) from exc
    except (ValueError, ml_models.ModelUnavailableError) as exc:
        raise ValidationError({"detail": str(exc)}) from exc


def model_rows() -> QuerySet[MLModel]:
    """Models as the representation reads them: the headline numbers and the newest job come
    from the database, so the metrics JSON is never loaded. Not scoped: callers scope it."""
    newest_job = (TrainingJob.objects.filter(ml_model=OuterRef("pk"))
                  .order_by("-created_at", "-pk").values("pk")[:1])
    return (
        MLModel.objects.defer("metrics")
        .annotate(latest_job_id=Subquery(newest_job), **model_headline_annotations())
    )


class ModelListCreateApi(generics.ListAPIView):
    """The models of your projects (`?project=` narrows to one); POST starts training a new one
    in its dataset's project and answers with the model (201), whose `latest_job_id` is the job
    to follow. A model has the same keys here and in its detail."""

    serializer_class = s.MLModelSerializer

    def get_queryset(self):
        return scoped(self.request, model_rows())

    @extend_schema(parameters=[PROJECT_PARAMETER])
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(request=s.TrainingStartSerializer, responses={201: s.MLModelSerializer},
                   examples=docs.TRAINING_EXAMPLES)
    def post(self, request: Request) -> Response:
        job = _start_training(request)
        model = model_rows().get(pk=job.ml_model_id)
        return Response(s.MLModelSerializer(model).data, status=status.HTTP_201_CREATED,
                        headers={"Location": _location(request, "api:model_detail", model.pk)})


class ModelDetailApi(APIView):
    @extend_schema(responses=s.MLModelSerializer)
    def get(self, request: Request, pk: int) -> Response:
        return Response(s.MLModelSerializer(
            row_get(request, model_rows(), action=Action.VIEW, pk=pk)).data)

    @extend_schema(responses={204: None, 409: OpenApiResponse(
        description="a training or batch of this model is still active")})
    def delete(self, request: Request, pk: int) -> Response:
        """Delete the model, its artifact and its jobs' checkpoints (files go after commit)."""
        try:
            services.mlmodel_delete(ml_model=model_get(request, pk, action=Action.DELETE),
                                    actor=request.user)
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ModelMetricsApi(APIView):
    @extend_schema(responses=s.ModelMetricsSerializer)
    def get(self, request: Request, pk: int) -> Response:
        model = model_get(request, pk)
        return Response(s.ModelMetricsSerializer(
            {"model_id": model.pk, "status": model.status, "metrics": model.metrics or {}}
        ).data)


class ModelPredictApi(APIView):
    """Classify one text (`text`), many (`texts`) or title+abstract pairs (`articles`).

    Up to SYNC_PREDICT_MAX_TEXTS (default 64) texts are answered inline with 200. More become a
    batch job on the inference worker: 202 with the batch, its `Location`, and a `result_url`
    (the CSV) to fetch once its status is `completed`.
    """

    parser_classes = [JSONParser]

    @extend_schema(request=s.PredictInputSerializer, responses={
        200: s.PredictOutputSerializer, 202: batch_serializers.PredictBatchSerializer,
    }, examples=docs.PREDICT_EXAMPLES)
    def post(self, request: Request, pk: int) -> Response:
        model = model_get(request, pk, action=Action.CLASSIFY)
        if not model.is_trained:
            raise ValidationError({"detail": "This model is not trained yet."})
        data = s.PredictInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        texts = data.texts_to_classify()
        threshold = data.validated_data["threshold"]
        if len(texts) > settings.SYNC_PREDICT_MAX_TEXTS:
            return self._as_batch(request, model, data, texts, threshold=threshold)
        try:
            predictions = services.mlmodel_predict(
                ml_model=model, threshold=threshold, texts=services.mlmodel_texts(
                    ml_model=model, texts=texts, metadata=data.metadata_given()))
        except ValueError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return Response(s.PredictOutputSerializer({
            "model_id": model.pk, "predictions": predictions, "threshold": threshold,
            "calibrated": mlmodel_calibrated(ml_model=model),
        }).data)

    def _as_batch(self, request: Request, model: MLModel, data: s.PredictInputSerializer,
                  texts: list[str], *, threshold: str) -> Response:
        # The same refusal the inline path gives, before anything is queued.
        empty = [i for i, text in enumerate(texts, start=1) if not text.strip()]
        if empty:
            raise ValidationError({"detail": f"Text {empty[0]} of {len(texts)} is empty; every "
                                             "text needs a title or an abstract."})
        try:
            batch = batch_services.batch_job_create_from_records(
                owner=request.user, ml_model=model, records=data.records_for_batch(),
                filename="predict-request", threshold=threshold,
            )
        except batch_services.BatchError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        body = batch_serializers.PredictBatchSerializer(batch, context={"detail": (
            f"{len(texts)} texts are more than {settings.SYNC_PREDICT_MAX_TEXTS} "
            "(SYNC_PREDICT_MAX_TEXTS), so they are classified as a batch job: poll `url` until "
            "`is_active` is false, then fetch `result_url` (CSV)."
        )}).data
        return batch_accepted(request, body)


# --- Jobs ---------------------------------------------------------------------------------------

JOB_EXPAND = {
    "history": "`history`, `history_length` and `history_reset`, the loss and F1 curves' points",
    "log_tail": "`log_tail`, the end of the training log",
}
# The two large columns: loaded only when ?expand= asks for what they hold.
JOB_HEAVY_COLUMNS = {"history": "metrics_history", "log_tail": "log_tail"}


def job_rows(expand: frozenset[str] = frozenset()) -> QuerySet[TrainingJob]:
    """Jobs as the representation reads them, with their model's project; not scoped."""
    heavy = [column for name, column in JOB_HEAVY_COLUMNS.items() if name not in expand]
    return TrainingJob.objects.defer(*heavy).annotate(
        **{s.JOB_PROJECT_ANNOTATION: F("ml_model__project_id")})


def _job_answer(job: TrainingJob, *, code: int = status.HTTP_200_OK) -> Response:
    return Response(s.JobSerializer(job).data, status=code)


class JobListCreateApi(generics.ListAPIView):
    """The training jobs of your projects (`?project=` narrows to one); POST starts one in its
    dataset's project (201). A job has the same keys here, in its detail and in the answers to
    cancel and resume."""

    serializer_class = s.JobSerializer

    def get_queryset(self):
        return scoped(self.request, job_rows())

    @extend_schema(parameters=[PROJECT_PARAMETER])
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(request=s.TrainingStartSerializer, responses={201: s.JobSerializer},
                   examples=docs.TRAINING_EXAMPLES)
    def post(self, request: Request) -> Response:
        job = _start_training(request)
        response = _job_answer(job, code=status.HTTP_201_CREATED)
        response["Location"] = _location(request, "api:job_status", job.pk)
        return response


class JobStatusApi(APIView):
    """One job: cheap enough to poll every second. `?expand=history&since=N&last=kind:step`
    adds the curves' points the poller has not seen yet, as the job page does."""

    @extend_schema(responses=s.JobSerializer, parameters=[
        _expand_parameter(JOB_EXPAND),
        OpenApiParameter("since", OpenApiTypes.INT, description="With expand=history: how many "
                         "points you hold (the `history_length` of your last poll)."),
        OpenApiParameter("last", OpenApiTypes.STR, description='With expand=history: "kind:step" '
                         "of the newest point you hold, to find your place once old points "
                         "are dropped."),
    ])
    def get(self, request: Request, pk: int) -> Response:
        expand = _expand(request, JOB_EXPAND)
        job = row_get(request, job_rows(expand), action=Action.VIEW, pk=pk)
        since = request.query_params.get("since", "0")
        return Response(s.JobSerializer(job, context={
            "expand": expand, "since": int(since) if since.isdigit() else 0,
            "last": request.query_params.get("last"),
        }).data)


class JobCancelApi(APIView):
    @extend_schema(request=None, responses={
        202: s.JobSerializer,
        400: OpenApiResponse(description="The job is not queued or running"),
    })
    def post(self, request: Request, pk: int) -> Response:
        job = job_get(request, pk, action=Action.CANCEL)
        if not job.is_active:
            raise ValidationError({"detail": f"The job is {job.status}; only queued or running "
                                             "jobs can be cancelled."})
        services.training_job_cancel(job=job, actor=request.user)
        return _job_answer(job_rows().get(pk=pk), code=status.HTTP_202_ACCEPTED)


class JobResumeApi(APIView):
    @extend_schema(request=None, responses={
        202: s.JobSerializer,
        400: OpenApiResponse(description="The job is not failed, stalled or cancelled"),
    })
    def post(self, request: Request, pk: int) -> Response:
        job = job_get(request, pk, action=Action.RESUME)
        if not job.is_resumable:
            raise ValidationError({"detail": f"The job is {job.status}; only failed, stalled or "
                                             "cancelled jobs can be resumed."})
        try:
            services.training_job_resume(job=job, actor=request.user)
        except ValueError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return _job_answer(job_rows().get(pk=job.pk), code=status.HTTP_202_ACCEPTED)
