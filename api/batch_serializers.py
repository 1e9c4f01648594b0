"""The API's representation of a batch classification, the same wherever a batch appears."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers import UploadField
from classification.batches.selectors import batch_job_progress
from classification.mlmodels.prediction import mlmodel_calibrated_by_id
from classification.models import BatchJob
from dataset_management.readers import FORMATS_SENTENCE


class BatchUploadSerializer(serializers.Serializer):
    file = UploadField(
        help_text=f"Articles in any format a dataset import reads ({FORMATS_SENTENCE}), with a "
        "title or abstract column; identifiers (PMID, DOI, record ids) are carried over.",
    )
    top_terms = serializers.BooleanField(
        default=False, help_text="Add a top_terms column to the CSV (and `top_terms` to each "
        "JSON Lines item): per predicted label, the words that pushed it up most. Milliseconds "
        "per article for TF-IDF models, about 1-2 s for transformers.",
    )
    threshold = serializers.ChoiceField(
        choices=["f1", "recall"], default="f1",
        help_text="Which per-label thresholds choose the labels: `f1` (tuned for each label's "
        "F1 on validation) or `recall` (set for the model's recall target on validation, 0.95 "
        "unless trained otherwise: more labels, fewer missed). A model saved before recall "
        "thresholds existed refuses `recall` with a 400, and nothing is queued.",
    )


class BatchSerializer(serializers.ModelSerializer):
    """A batch classification, the same in the list, the detail, the 202 of a create and of a
    cancel: poll `url` until `is_active` is false, then fetch `result_url`."""

    id = serializers.UUIDField(format="hex", read_only=True)
    model_id = serializers.IntegerField(source="ml_model_id", read_only=True,
                                        help_text="The model that classifies it.")
    model_name = serializers.CharField(source="ml_model.name", read_only=True)
    status_display = serializers.CharField(source="get_status_display", read_only=True)
    phase_display = serializers.SerializerMethodField(
        help_text='Where it stands, e.g. "120 of 200 articles".',
    )
    progress = serializers.SerializerMethodField(help_text="Percent done, 0-100.")
    eta_seconds = serializers.SerializerMethodField(help_text="Seconds left; null while unknown.")
    is_active = serializers.BooleanField(read_only=True, help_text="Queued or running.")
    url = serializers.SerializerMethodField(help_text="This batch in the API.")
    result_url = serializers.SerializerMethodField(
        help_text="The CSV of predictions, once the status is completed; null before.",
    )
    calibrated = serializers.SerializerMethodField(
        help_text="True: the `p_<label>` probabilities in its results went through the model's "
        "calibration map, fitted on its validation split (the model's page states how often "
        "they held on those held-out rows). False: no map is applied, they are the model's "
        "own: its calibration `select` kept none, it was trained with calibration `none`, or "
        "saved before calibration existed.",
    )

    class Meta:
        model = BatchJob
        fields = [
            "id", "project", "model_id", "model_name", "status", "status_display", "phase_display",
            "filename", "total", "processed", "skipped", "progress", "eta_seconds", "is_active",
            "cancel_requested", "reason", "created_at", "started_at", "finished_at",
            "updated_at", "url", "result_url", "calibrated", "threshold",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "total": {"help_text": "Articles in the file; null while they are being counted."},
            "skipped": {"help_text": "Articles without any text, left out of the CSV's labels."},
            "project": {"help_text": "The id of the project it belongs to (its model's)."},
            "threshold": {"help_text": "The thresholds that chose its labels, as asked at "
                          "creation: `f1` or `recall`. Its JSON Lines items say it too."},
        }

    def _progress(self, obj: BatchJob) -> dict:
        cache = self.context.setdefault("_progress", {})
        if obj.pk not in cache:
            cache[obj.pk] = batch_job_progress(batch=obj)
        return cache[obj.pk]

    def get_progress(self, obj: BatchJob) -> float:
        return self._progress(obj)["progress"]

    def get_eta_seconds(self, obj: BatchJob) -> float | None:
        return self._progress(obj)["eta_seconds"]

    def get_phase_display(self, obj: BatchJob) -> str:
        return self._progress(obj)["phase_display"]

    def get_url(self, obj: BatchJob) -> str:
        return reverse("api:batch_detail", args=[obj.pk.hex])

    def get_calibrated(self, obj: BatchJob) -> bool:
        # One query per model seen on this page, not per batch.
        cache = self.context.setdefault("_calibrated", {})
        if obj.ml_model_id not in cache:
            cache.update(mlmodel_calibrated_by_id(ml_model_ids={obj.ml_model_id}))
        return cache[obj.ml_model_id]

    def get_result_url(self, obj: BatchJob) -> str | None:
        if obj.status != BatchJob.Status.COMPLETED:
            return None
        return reverse("api:batch_result", args=[obj.pk.hex])


@extend_schema_field({"$ref": "#/components/schemas/BatchStatusEnum"})
class BatchStatusField(serializers.CharField):
    """The batch's status enum by reference: a second copy would make drf-spectacular name the
    enum by a hash instead of BatchStatusEnum."""


class PredictBatchSerializer(BatchSerializer):
    """The batch that a predict request with more than SYNC_PREDICT_MAX_TEXTS texts became,
    with a `detail` saying so."""

    status = BatchStatusField(read_only=True)
    detail = serializers.SerializerMethodField(
        help_text="Why the texts became a batch, and how to follow it.",
    )

    class Meta(BatchSerializer.Meta):
        fields = [*BatchSerializer.Meta.fields, "detail"]

    def get_detail(self, obj: BatchJob) -> str:
        return self.context.get("detail", "")
