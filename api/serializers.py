from __future__ import annotations

from rest_framework import serializers

from classification.batches.selectors import batch_job_progress
from classification.ml_models import REGISTRY
from classification.models import BatchJob, MLModel, TrainingJob
from dataset_management.models import Dataset


class DatasetOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = Dataset
        fields = [
            "id", "name", "description", "original_filename", "file_format", "encoding",
            "text_fields", "label_field", "label_names", "is_multilabel", "row_count",
            "label_counts", "split_seed", "split_ratios", "split_sizes", "created_at",
        ]


class DatasetDetailSerializer(DatasetOutputSerializer):
    class Meta(DatasetOutputSerializer.Meta):
        fields = [*DatasetOutputSerializer.Meta.fields, "report"]


class DatasetUploadSerializer(serializers.Serializer):
    file = serializers.FileField()
    name = serializers.CharField(max_length=200, required=False, allow_blank=True)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    mapping = serializers.JSONField(
        required=False,
        help_text='Column overrides, e.g. {"title": "Title", "abstract": "AB", "labels": "group",'
        ' "label_separator": "|"}. Omit to use the detected mapping.',
    )
    split_ratios = serializers.ListField(
        child=serializers.FloatField(min_value=0, max_value=1), min_length=3, max_length=3,
        required=False, help_text="train, validation, test; must sum to 1 (default 0.8, 0.1, 0.1)",
    )
    seed = serializers.IntegerField(required=False, default=42)

    def validate_split_ratios(self, value: list[float]) -> list[float]:
        if abs(sum(value) - 1.0) > 1e-6:
            raise serializers.ValidationError("The three ratios must sum to 1.")
        return value


class ModelOutputSerializer(serializers.ModelSerializer):
    dataset = serializers.PrimaryKeyRelatedField(read_only=True)
    latest_job = serializers.SerializerMethodField()

    class Meta:
        model = MLModel
        fields = [
            "id", "name", "model_type", "dataset", "status", "label_names", "is_multilabel",
            "parameters", "device_used", "created_at", "trained_at", "latest_job",
        ]

    def get_latest_job(self, obj: MLModel) -> int | None:
        jobs = getattr(obj, "prefetched_jobs", None)
        if jobs is not None:
            return jobs[0].pk if jobs else None
        job = obj.training_jobs.order_by("-created_at").only("id").first()
        return job.pk if job else None


class ModelDetailSerializer(ModelOutputSerializer):
    headline_metrics = serializers.SerializerMethodField()

    class Meta(ModelOutputSerializer.Meta):
        fields = [*ModelOutputSerializer.Meta.fields, "headline_metrics", "device_plan",
                  "library_versions"]

    def get_headline_metrics(self, obj: MLModel) -> dict:
        keep = ("micro_f1", "macro_f1", "weighted_f1", "accuracy", "subset_accuracy",
                "hamming_loss", "roc_auc_macro", "n")
        return {k: v for k, v in (obj.metrics or {}).items() if k in keep}


class TrainingStartSerializer(serializers.Serializer):
    dataset = serializers.IntegerField(help_text="id of one of your datasets")
    model_type = serializers.ChoiceField(choices=sorted(REGISTRY))
    name = serializers.CharField(max_length=200, required=False, allow_blank=True)
    config = serializers.JSONField(
        required=False, default=dict,
        help_text='Training parameters, e.g. {"epochs": 3, "batch_size": 16, "max_length": 256}; '
        'custom models need "model_path".',
    )


class JobOutputSerializer(serializers.ModelSerializer):
    model = serializers.IntegerField(source="ml_model_id", read_only=True)
    heartbeat_age_seconds = serializers.FloatField(read_only=True, allow_null=True)

    class Meta:
        model = TrainingJob
        fields = [
            "id", "model", "status", "phase", "progress_percentage", "current_epoch",
            "total_epochs", "current_step", "total_steps", "eta_seconds", "last_loss",
            "heartbeat_at", "heartbeat_age_seconds", "cancel_requested", "reason", "attempt",
            "device_plan", "config", "created_at", "started_at", "finished_at",
        ]


class JobStatusSerializer(serializers.Serializer):
    """The same payload the job page polls."""

    id = serializers.IntegerField()
    model_id = serializers.IntegerField()
    status = serializers.CharField()
    phase = serializers.CharField()
    progress = serializers.FloatField()
    epoch = serializers.FloatField()
    total_epochs = serializers.IntegerField()
    step = serializers.IntegerField()
    total_steps = serializers.IntegerField()
    eta_seconds = serializers.FloatField(allow_null=True)
    loss = serializers.FloatField(allow_null=True)
    heartbeat_age_seconds = serializers.FloatField(allow_null=True)
    attempt = serializers.IntegerField()
    is_active = serializers.BooleanField()
    is_resumable = serializers.BooleanField()
    reason = serializers.CharField()
    reason_plain = serializers.CharField()
    history = serializers.ListField(child=serializers.DictField())


class ArticleSerializer(serializers.Serializer):
    title = serializers.CharField(required=False, allow_blank=True, default="")
    abstract = serializers.CharField(required=False, allow_blank=True, default="")


class PredictInputSerializer(serializers.Serializer):
    """Up to SYNC_PREDICT_MAX_TEXTS texts are classified inline (200); more become a batch job
    on the inference worker (202 with the batch and its Location)."""

    text = serializers.CharField(required=False, help_text="One text to classify.")
    texts = serializers.ListField(child=serializers.CharField(), required=False, max_length=1000,
                                  help_text="Many texts (up to 1000).")
    articles = ArticleSerializer(many=True, required=False,
                                 help_text="Title + abstract pairs (up to 1000).")

    def validate_articles(self, value: list[dict]) -> list[dict]:
        if len(value) > 1000:
            raise serializers.ValidationError("At most 1000 articles per request.")
        return value

    def validate(self, attrs: dict) -> dict:
        given = [k for k in ("text", "texts", "articles") if attrs.get(k)]
        if len(given) != 1:
            raise serializers.ValidationError("Give exactly one of text, texts or articles.")
        return attrs

    def texts_to_classify(self) -> list[str]:
        data = self.validated_data
        if data.get("text"):
            return [data["text"]]
        if data.get("texts"):
            return list(data["texts"])
        return [
            f"{a['title'].strip()}\n\n{a['abstract'].strip()}".strip() for a in data["articles"]
        ]

    def records_for_batch(self) -> list[dict[str, str]]:
        """The same input as rows a batch file holds: {"text"} or {"title", "abstract"}."""
        data = self.validated_data
        if data.get("articles"):
            return [{"title": a["title"].strip(), "abstract": a["abstract"].strip()}
                    for a in data["articles"]]
        return [{"text": text} for text in self.texts_to_classify()]


class PredictionSerializer(serializers.Serializer):
    labels = serializers.ListField(child=serializers.CharField())
    probabilities = serializers.DictField(child=serializers.FloatField())


class PredictOutputSerializer(serializers.Serializer):
    model = serializers.IntegerField()
    predictions = PredictionSerializer(many=True)


class BatchUploadSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text="Articles in any format a dataset import reads (CSV, TSV, XLSX, JSON, JSONL, "
        "RIS, nbib), with a title or abstract column; an id/pmid column is carried over.",
    )


class BatchJobOutputSerializer(serializers.ModelSerializer):
    """A batch classification: poll `url` until `is_active` is false, then fetch `result_url`."""

    id = serializers.UUIDField(format="hex", read_only=True)
    model = serializers.IntegerField(source="ml_model_id", read_only=True)
    model_name = serializers.CharField(source="ml_model.name", read_only=True)
    progress = serializers.SerializerMethodField()
    eta_seconds = serializers.SerializerMethodField()
    phase_display = serializers.SerializerMethodField()
    is_active = serializers.BooleanField(read_only=True)
    url = serializers.SerializerMethodField()
    result_url = serializers.SerializerMethodField()

    class Meta:
        model = BatchJob
        fields = [
            "id", "model", "model_name", "status", "filename", "total", "processed", "skipped",
            "progress", "eta_seconds", "phase_display", "is_active", "cancel_requested",
            "reason", "created_at", "started_at", "finished_at", "updated_at", "url",
            "result_url",
        ]

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
        from django.urls import reverse

        return reverse("api:batch_detail", args=[obj.pk.hex])

    def get_result_url(self, obj: BatchJob) -> str | None:
        from django.urls import reverse

        if obj.status != BatchJob.Status.COMPLETED:
            return None
        return reverse("api:batch_result", args=[obj.pk.hex])
