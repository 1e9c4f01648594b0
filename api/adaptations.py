"""POST /api/adaptations/: start an adapt job (an encoder's masked-language-model pretraining
continued on a project's texts), as the web page "Adapt an encoder to your literature" does.

The datasets and batches are looked up among the caller's projects (an id outside them is "no
such"); classification.jobs.adapt.adapt_job_create checks the rest (one project, the role that
may train there, finished batches, a transformer base) and its refusals come back on the field
they are about. The answer is 202 with the job, as GET /api/jobs/<id>/ gives it: poll that.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import serializers as s
from api.views import job_rows
from classification import ml_models
from classification.batches.selectors import batch_job_list, batch_job_uuid
from classification.jobs.adapt import adapt_job_create
from dataset_management.models import Dataset
from projects import policy

FIELD_OF_SETTING = {"adapt_datasets": "datasets", "adapt_batches": "batches"}
EXAMPLES = [OpenApiExample(
    "MiniLM on one dataset", request_only=True,
    value={"datasets": [1], "batches": [], "name": "MiniLM for cardiology",
           "config": {"adapt_base": "minilm", "epochs": 1, "mlm_probability": 0.15,
                      "adapt_training_only": True}})]


class AdaptationStartSerializer(serializers.Serializer):
    datasets = serializers.ListField(child=serializers.IntegerField(min_value=1),
                                     min_length=1, help_text="Ids of datasets in one project.")
    batches = serializers.ListField(child=serializers.CharField(max_length=40), required=False,
                                    default=list, help_text="Ids of finished batches there.")
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    config = serializers.DictField(required=False, default=dict, help_text=(
        "Settings: adapt_base, adapt_training_only (default true), mlm_probability, epochs, "
        "batch_size, learning_rate, max_length, seed."))


def _sources(request: Request, data: dict[str, Any]) -> tuple[list[Dataset], list[Any]]:
    wanted = list(dict.fromkeys(data["datasets"]))
    found = {d.pk: d for d in policy.scope(Dataset.objects.all(), user=request.user)
             .filter(pk__in=wanted)}
    if missing := [pk for pk in wanted if pk not in found]:
        raise ValidationError({"datasets": [f"No such dataset: {missing[0]}."]})
    batches = []
    for given in dict.fromkeys(data["batches"]):
        pk = batch_job_uuid(given)
        batch = batch_job_list(user=request.user).filter(pk=pk).first() if pk else None
        if batch is None:
            raise ValidationError({"batches": [f"No such batch: {given}."]})
        batches.append(batch)
    return [found[pk] for pk in wanted], batches


def _errors(errors: dict[str, list[str]]) -> dict[str, Any]:
    """The service's errors by setting: the sources' on their fields, the rest under config."""
    answer: dict[str, Any] = {}
    for setting, messages in errors.items():
        if setting in FIELD_OF_SETTING:
            answer[FIELD_OF_SETTING[setting]] = messages
        else:
            answer.setdefault("config", {})[setting] = messages
    return answer


class AdaptationCreateApi(APIView):
    """Start adapting an encoder to the texts of datasets and finished batches (202)."""

    @extend_schema(request=AdaptationStartSerializer, responses={202: s.JobSerializer},
                   examples=EXAMPLES)
    def post(self, request: Request) -> Response:
        data = AdaptationStartSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        datasets, batches = _sources(request, data.validated_data)
        try:
            job = adapt_job_create(owner=request.user, datasets=datasets, batches=batches,
                                   name=data.validated_data["name"].strip(),
                                   config=data.validated_data["config"])
        except ml_models.TrainConfigError as exc:
            raise ValidationError(_errors(exc.errors)) from exc
        except ValueError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        location = request.build_absolute_uri(reverse("api:job_status", args=[job.pk]))
        return Response(s.JobSerializer(job_rows().get(pk=job.pk)).data,
                        status=status.HTTP_202_ACCEPTED, headers={"Location": location})
