"""POST /api/models/ensemble/: combine trained models of one dataset into an ensemble.

The web page's Compare door and this one share classification.jobs.ensembles.ensemble_create,
which checks the members; its refusals are about the members, so they come back as errors of
`member_ids`. The answer is the new model (201), as POST /api/models/ gives it: its
`latest_job_id` is the job that tunes the weights on the training worker.
"""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import serializers as s
from api.views import model_rows
from classification.jobs.ensembles import MAX_MEMBERS, MIN_MEMBERS, ensemble_create

ENSEMBLE_EXAMPLES = [
    OpenApiExample(
        "Two models", request_only=True,
        value={"member_ids": [1, 2], "name": "TF-IDF and MiniLM"},
        description="Ids of two trained models of one dataset in your projects.",
    ),
]


class EnsembleCreateSerializer(serializers.Serializer):
    member_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1), min_length=MIN_MEMBERS,
        max_length=MAX_MEMBERS,
        help_text=f"{MIN_MEMBERS} to {MAX_MEMBERS} ids of trained models (not ensembles) of "
        "one dataset in a project where you are a maintainer or owner; the ensemble joins that "
        "project.",
    )
    name = serializers.CharField(max_length=200, required=False, allow_blank=True,
                                 help_text='Defaults to "Ensemble of <member names>".')


class EnsembleCreateApi(APIView):
    """Combine trained models into an ensemble: weights and thresholds are tuned on the
    dataset's validation split by a training job; the members are copied into it."""

    @extend_schema(request=EnsembleCreateSerializer, responses={201: s.MLModelSerializer},
                   examples=ENSEMBLE_EXAMPLES)
    def post(self, request: Request) -> Response:
        data = EnsembleCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            job = ensemble_create(owner=request.user,
                                  member_ids=data.validated_data["member_ids"],
                                  name=data.validated_data.get("name", "").strip())
        except ValueError as exc:
            raise ValidationError({"member_ids": [str(exc)]}) from exc
        model = model_rows().get(pk=job.ml_model_id)
        location = request.build_absolute_uri(reverse("api:model_detail", args=[model.pk]))
        return Response(s.MLModelSerializer(model).data, status=status.HTTP_201_CREATED,
                        headers={"Location": location})
