"""GET /api/models/compare/?ids=1,2&on=test: models compared on the same rows, each metric with a
95% bootstrap interval and each model's paired difference from the best (the Compare page's
figures: classification.mlmodels.comparison).

`on` is `test` (the models' shared test split: one dataset) or `evaluation:<ref>`, where ref is
the sha256 of a file every model has a finished evaluation of (still kept), or the ids of one
evaluation per model separated by commas. Rows the models cannot all be compared on are a 400
that says why; a model outside the caller's projects is a 404.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from classification import selectors
from classification.mlmodels.comparison import COMPARE_ERRORS, TEST, mlmodel_comparison

MAX_MODELS = 8


class IntervalSerializer(serializers.Serializer):
    value = serializers.FloatField(help_text="The metric on the rows themselves.")
    low = serializers.FloatField(help_text="2.5th percentile over the resamples.")
    high = serializers.FloatField(help_text="97.5th percentile over the resamples.")


class ComparedModelSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    metrics = serializers.DictField(
        child=IntervalSerializer(),
        help_text="By metric key: accuracy (single-label) or subset_accuracy (multi-label), "
        "micro_f1, macro_f1, and f1:<label> per label.")


class DifferenceSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The model compared with the best.")
    name = serializers.CharField()
    metric = serializers.CharField()
    metric_label = serializers.CharField()
    difference = serializers.FloatField(help_text="The best model's score minus this one's.")
    low = serializers.FloatField()
    high = serializers.FloatField()
    p_value = serializers.FloatField(help_text="Two-sided, from the paired bootstrap.")
    distinguishable = serializers.BooleanField(
        help_text="False when the difference's interval includes 0: not distinguishable on "
        "these rows.")


class McNemarSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    first_only_right = serializers.IntegerField(help_text="Rows only the best model gets right.")
    second_only_right = serializers.IntegerField(help_text="Rows only this model gets right.")
    p_value = serializers.FloatField(help_text="McNemar's exact test, two-sided.")


class BestSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    by = serializers.CharField(help_text="The metric the best model is chosen by.")


class MetricNameSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()


class ComparisonSerializer(serializers.Serializer):
    on = serializers.CharField(help_text="The rows asked for, as given.")
    basis = serializers.CharField(help_text="Which rows, in words.")
    rows = serializers.IntegerField(help_text="Rows every model was scored on.")
    rounds = serializers.IntegerField(help_text="Bootstrap resamples of the rows.")
    seed = serializers.IntegerField()
    level = serializers.FloatField(help_text="Of every interval: 0.95.")
    multi_label = serializers.BooleanField()
    metrics = MetricNameSerializer(many=True)
    models = ComparedModelSerializer(many=True)
    best = BestSerializer()
    differences = DifferenceSerializer(many=True)
    mcnemar = McNemarSerializer(many=True, help_text="Single-label models only; [] otherwise.")


class ModelCompareApi(APIView):
    """Models compared on the same rows, with intervals and paired tests."""

    @extend_schema(
        parameters=[
            OpenApiParameter("ids", OpenApiTypes.STR, required=True,
                             description=f"2 to {MAX_MODELS} model ids separated by commas."),
            OpenApiParameter("on", OpenApiTypes.STR,
                             description="`test` (default) or `evaluation:<file sha256 or "
                             "evaluation ids separated by commas>`."),
        ],
        responses={200: ComparisonSerializer},
    )
    def get(self, request: Request) -> Response:
        parts = [p.strip() for p in request.query_params.get("ids", "").split(",") if p.strip()]
        if not parts or not all(p.isdigit() for p in parts):
            raise ValidationError({"ids": ["Give model ids separated by commas, e.g. ids=1,2."]})
        ids = list(dict.fromkeys(int(p) for p in parts))
        if not 2 <= len(ids) <= MAX_MODELS:
            raise ValidationError({"ids": [f"Give 2 to {MAX_MODELS} different model ids."]})
        found = {m.pk: m for m in selectors.mlmodel_list(user=request.user).filter(pk__in=ids)
                 .select_related("dataset")}
        if len(found) != len(ids):
            raise NotFound("One of those models does not exist.")
        try:
            figures = mlmodel_comparison(user=request.user, models=[found[i] for i in ids],
                                         on=request.query_params.get("on") or TEST)
        except COMPARE_ERRORS as exc:
            raise ValidationError({"on": [str(exc)]}) from exc
        return Response(ComparisonSerializer(figures).data)
