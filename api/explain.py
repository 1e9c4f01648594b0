"""POST /api/models/<id>/explain/: the words that pushed each label of one prediction up or down.

TF-IDF models get exact contributions (coefficient x tf-idf value per n-gram, a character
n-gram's credited to the word it lies in; they add up with the intercept to the score);
transformers get Integrated Gradients, about a second of CPU per label, which is why only the
predicted labels are explained unless `labels` names others, and why a user may ask for
EXPLAIN_THROTTLE_RATE explanations at most.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import UserRateThrottle
from rest_framework.views import APIView

from api.ownership import Action, model_get
from api.predict_inputs import capped_text
from classification.engine.types import article_text
from classification.mlmodels.explanations import (
    EXPLAIN_MAX_LABELS,
    ExplainBusy,
    mlmodel_explain,
)

EXPLAIN_THROTTLE_RATE = getattr(settings, "API_EXPLAIN_THROTTLE_RATE", "60/min")

EXPLAIN_EXAMPLES = [
    OpenApiExample(
        "One text", request_only=True,
        value={"text": "Coronary stenting outcomes after acute myocardial infarction"},
        description="Explains the labels the model predicts for this text.",
    ),
    OpenApiExample(
        "Title and abstract", request_only=True,
        value={"title": "Temozolomide in newly diagnosed glioblastoma",
               "abstract": "Radiotherapy plus temozolomide prolonged survival in adults."},
    ),
    OpenApiExample(
        "Chosen labels", request_only=True,
        value={"text": "Hepatorenal syndrome in decompensated cirrhosis",
               "labels": ["hepatorenal", "cardiovascular"], "top_k": 5},
        description="Why each named label scored as it did, predicted or not (the demo "
        "dataset's labels).",
    ),
]


class ExplainInputSerializer(serializers.Serializer):
    """`text`, or `title` and/or `abstract` (joined as the model saw them in training)."""

    text = capped_text(required=False, help_text="The text to explain (up to MAX_TEXT_CHARS "
                       "characters).")
    title = serializers.CharField(required=False, allow_blank=True, max_length=2000)
    abstract = serializers.CharField(required=False, allow_blank=True, max_length=100_000)
    labels = serializers.ListField(
        child=serializers.CharField(), required=False, max_length=EXPLAIN_MAX_LABELS,
        help_text="Labels to explain; default: the predicted ones (the most probable one when "
        "none is predicted).",
    )
    top_k = serializers.IntegerField(required=False, min_value=1, max_value=50, default=10,
                                     help_text="Terms listed per direction and label.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        article = bool((attrs.get("title") or "").strip() or (attrs.get("abstract") or "").strip())
        if bool(attrs.get("text")) == article:
            raise serializers.ValidationError("Give either text, or a title and/or an abstract.")
        return attrs

    def text_to_explain(self) -> str:
        data = self.validated_data
        return data.get("text") or article_text(data.get("title"), data.get("abstract"))


class TermSerializer(serializers.Serializer):
    term = serializers.CharField(help_text=(
        "A word n-gram (TF-IDF), a word with its character n-grams' weight summed (TF-IDF with "
        "character n-grams), or a word (transformers)."))
    weight = serializers.FloatField(help_text="Its contribution to the score, in logits.")
    value = serializers.FloatField(required=False, help_text=(
        "TF-IDF word n-grams only: its tf-idf value."))
    coefficient = serializers.FloatField(required=False, help_text=(
        "TF-IDF word n-grams only: the model's coefficient."))


@extend_schema_field({"type": "array", "items": {"type": "number"}, "minItems": 3,
                      "maxItems": 3, "example": [12, 24, 0.31]})
class SpanField(serializers.Field):
    """[start, end, weight]: a word at text[start:end] and its weight."""

    def to_representation(self, value: Any) -> list[float | int]:
        return [int(value[0]), int(value[1]), float(value[2])]


class LabelExplanationSerializer(serializers.Serializer):
    label = serializers.CharField()
    probability = serializers.FloatField()
    predicted = serializers.BooleanField()
    score = serializers.FloatField(allow_null=True, help_text="The label's logit.")
    base_score = serializers.FloatField(
        allow_null=True, help_text="The score with no words: the intercept (TF-IDF) or the "
        "score of the text with every word replaced by [PAD] (transformers).")
    delta = serializers.FloatField(help_text="base_score + the span weights - score: 0 for "
                                   "TF-IDF, Integrated Gradients' numerical error otherwise.")
    steps = serializers.IntegerField(required=False,
                                     help_text="Transformers: Integrated Gradients' steps.")
    positive = TermSerializer(many=True, help_text="What pushed the score up, strongest first.")
    negative = TermSerializer(many=True, help_text="What pushed it down, strongest first.")
    spans = serializers.ListField(child=SpanField(), help_text="Every word that carries weight.")


class ExplainOutputSerializer(serializers.Serializer):
    model_id = serializers.IntegerField()
    model_type = serializers.CharField()
    method = serializers.CharField(help_text="`linear` (TF-IDF: exact) or "
                                   "`integrated_gradients` (transformers).")
    score_kind = serializers.CharField(help_text="What `score` is.")
    truncated_at = serializers.IntegerField(
        allow_null=True, help_text="The model read the text only up to this character (a "
        "transformer's token limit); null when it read it all.")
    text = serializers.CharField(help_text="The text explained: spans index into it.")
    explanations = LabelExplanationSerializer(many=True)


class ExplainRateThrottle(UserRateThrottle):
    scope = "explain"
    rate = EXPLAIN_THROTTLE_RATE


class ModelExplainApi(APIView):
    """Explain one prediction: per label, the words that pushed its score up or down, with
    character spans for highlighting. Exact for TF-IDF models; Integrated Gradients for
    transformers (about a second per label on a CPU)."""

    parser_classes = [JSONParser]
    throttle_classes = [ExplainRateThrottle]

    @extend_schema(request=ExplainInputSerializer, responses={
        200: ExplainOutputSerializer,
        400: OpenApiResponse(description="No text, a text too long, an unknown label, or an "
                             "untrained model"),
        403: OpenApiResponse(description="Your role in the model's project may not explain"),
        404: OpenApiResponse(description="No such model in your projects"),
        503: OpenApiResponse(description="Busy explaining; retry after Retry-After seconds"),
    }, examples=EXPLAIN_EXAMPLES)
    def post(self, request: Request, pk: int) -> Response:
        model = model_get(request, pk, action=Action.EXPLAIN)
        if not model.is_trained:
            raise ValidationError({"detail": "This model is not trained yet."})
        data = ExplainInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        text = data.text_to_explain()
        try:
            result = mlmodel_explain(ml_model=model, text=text,
                                     labels=data.validated_data.get("labels") or None,
                                     top_k=data.validated_data["top_k"])
        except ExplainBusy as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_503_SERVICE_UNAVAILABLE,
                            headers={"Retry-After": str(exc.retry_after_seconds)})
        except ValueError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return Response(ExplainOutputSerializer({**result, "text": text}).data)
