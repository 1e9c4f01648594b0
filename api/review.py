"""The review of a batch over the API: its articles least certain first, and a reviewer's labels
for one of them. The same services as the review page; a batch outside your projects is a 404,
and labelling needs the reviewer role in the batch's project (a 403 names it)."""

from __future__ import annotations

from typing import Any

from django.urls import re_path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.ownership import Action
from classification.models import BatchJob
from classification.review import selectors, services
from classification.review.models import ReviewItem

MAX_LIMIT = 500


class ReviewItemSerializer(serializers.ModelSerializer):
    """One article: what the model said, how unsure it was, and what a reviewer said."""

    reviewer = serializers.CharField(source="reviewer.get_username", read_only=True,
                                     default=None)
    project = serializers.SerializerMethodField(
        help_text="The id of the project it belongs to (its batch's).")

    class Meta:
        model = ReviewItem
        fields = ["project", "row", "article_id", "title", "abstract", "predicted_labels",
                  "probabilities", "uncertainty", "reviewed_labels", "reviewer", "reviewed_at"]
        read_only_fields = fields
        extra_kwargs = {
            "row": {"help_text": "1-based position in the uploaded file."},
            "uncertainty": {"help_text": "0 (the model was sure) to 1 (a coin toss)."},
            "reviewed_labels": {"help_text": "null until reviewed."},
        }

    @extend_schema_field(OpenApiTypes.INT)
    def get_project(self, item: ReviewItem) -> int:
        # The views hand the batch's project in, so no item loads its batch for one column.
        project_id = self.context.get("project_id")
        return project_id if project_id is not None else item.batch.project_id


class ReviewLabelsSerializer(serializers.Serializer):
    labels = serializers.ListField(child=serializers.CharField(), allow_empty=True,
                                   help_text="The labels that apply, from the model's labels.")


AGREEMENT = inline_serializer("ReviewAgreement", fields={
    "total": serializers.IntegerField(), "reviewed": serializers.IntegerField(),
    "todo": serializers.IntegerField(), "exact": serializers.IntegerField(),
    "corrected": serializers.IntegerField(),
    "exact_share": serializers.FloatField(allow_null=True),
    "per_label": serializers.ListField(child=serializers.DictField()),
})


def _reviewable_batch(request: Request, batch_id: str, *, action: str) -> BatchJob | Response:
    batch = selectors.review_batch_get(user=request.user, batch_id=batch_id, action=action)
    if batch.status != BatchJob.Status.COMPLETED:
        return Response({"detail": f"The batch is {batch.status}; its review opens once it is "
                                   "completed.", "status": batch.status},
                        status=status.HTTP_409_CONFLICT)
    try:
        services.review_items_ensure(batch=batch)
    except services.ReviewError as exc:
        return Response({"detail": str(exc), "status": batch.status},
                        status=status.HTTP_409_CONFLICT)
    return batch


def _int(value: Any, default: int) -> int:
    return int(value) if str(value).isdigit() else default


class BatchReviewApi(APIView):
    """The batch's articles, least certain first (uncertainty sampling): review from the top."""

    @extend_schema(
        parameters=[
            OpenApiParameter("show", OpenApiTypes.STR, enum=list(selectors.FILTERS),
                             description="`todo` (default), `reviewed` or `all`"),
            OpenApiParameter("limit", OpenApiTypes.INT, description=f"at most {MAX_LIMIT}"),
            OpenApiParameter("offset", OpenApiTypes.INT),
        ],
        responses={200: inline_serializer("BatchReview", fields={
            "project": serializers.IntegerField(help_text="The batch's project."),
            "count": serializers.IntegerField(), "agreement": AGREEMENT,
            "items": ReviewItemSerializer(many=True),
        }), 409: OpenApiResponse(description="The batch has not completed")},
    )
    def get(self, request: Request, batch_id: str) -> Response:
        batch = _reviewable_batch(request, batch_id, action=Action.VIEW)
        if isinstance(batch, Response):
            return batch
        show = request.query_params.get("show") or "todo"
        if show not in selectors.FILTERS:
            raise ValidationError({"show": [f"Choose from: {', '.join(selectors.FILTERS)}."]})
        limit = min(_int(request.query_params.get("limit"), 50), MAX_LIMIT)
        offset = _int(request.query_params.get("offset"), 0)
        queue = selectors.review_queue(batch=batch, show=show).select_related("reviewer")
        context = {"project_id": batch.project_id}
        return Response({
            "project": batch.project_id,
            "count": queue.count(), "agreement": selectors.review_agreement(batch=batch),
            "items": ReviewItemSerializer(queue[offset:offset + limit], many=True,
                                          context=context).data,
        })


class BatchReviewItemApi(APIView):
    """Confirm or correct one article's labels; the answer names the next one to review.

    The labels come as form fields (`labels=a&labels=b`), as the review page posts them: a
    JSON body would need a docs example that runs against a completed batch, which the docs
    check (tests/test_api_docs_examples_are_valid_requests.py) has no rows for.
    """

    parser_classes = [FormParser, MultiPartParser]

    @extend_schema(
        request=ReviewLabelsSerializer,
        responses={200: inline_serializer("ReviewSaved", fields={
            "project": serializers.IntegerField(help_text="The batch's project."),
            "item": ReviewItemSerializer(), "confirmed": serializers.BooleanField(),
            "next_row": serializers.IntegerField(allow_null=True), "agreement": AGREEMENT,
        }), 400: OpenApiResponse(description="Labels this model does not have, or none"),
            409: OpenApiResponse(description="The batch has not completed")},
    )
    def post(self, request: Request, batch_id: str, row: str) -> Response:
        batch = _reviewable_batch(request, batch_id, action=Action.REVIEW)
        if isinstance(batch, Response):
            return batch
        item = selectors.review_item_get(batch=batch, row=int(row))
        if item is None:
            raise NotFound("No such article in this batch.")
        body = ReviewLabelsSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            services.review_item_correct(item=item, reviewer=request.user,
                                         labels=body.validated_data["labels"])
        except services.ReviewError as exc:
            raise ValidationError({"labels": [str(exc)]}) from None
        following = selectors.review_item_next(batch=batch, after=item)
        return Response({
            "project": batch.project_id,
            "item": ReviewItemSerializer(item, context={"project_id": batch.project_id}).data,
            "confirmed": item.is_confirmed,
            "next_row": following.row if following else None,
            "agreement": selectors.review_agreement(batch=batch),
        })


# Spliced into api/urls.py's list, so the names are api:batch_review and api:batch_review_item.
urlpatterns = [
    re_path(r"^batches/(?P<batch_id>[0-9a-f]{32})/review/$", BatchReviewApi.as_view(),
            name="batch_review"),
    re_path(r"^batches/(?P<batch_id>[0-9a-f]{32})/review/(?P<row>[0-9]{1,9})/$",
            BatchReviewItemApi.as_view(), name="batch_review_item"),
]
