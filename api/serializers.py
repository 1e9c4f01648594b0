"""The API's representations: one serializer per resource, used by its create, list, detail and
action answers alike, so a key means the same thing (and exists) wherever the resource appears.

Names: a related row is `<thing>_id`, but for `project`, the id of the project a row belongs to,
which the API and CLI contract names so (issue 26); a choice comes with its words as
`<choice>_display`; a job's progress is `progress`, `epoch`, `step`, `loss`, `eta_seconds`, as
on the job page's JSON. Heavy fields are left out unless the request names them in `?expand=`
(see `ExpandableSerializer`).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.predict_inputs import ArticleSerializer, capped_text
from api.presenters import job_history_window, job_phase_display, model_headline_metrics
from classification.engine.metadata import FIELDS as METADATA_FIELDS
from classification.engine.schema import (
    STAFF,
    TrainConfigError,
    training_config_clean,
    user_settings,
)
from classification.engine.types import article_text
from classification.ml_models import REGISTRY
from classification.models import MLModel, TrainingJob
from classification.views.presenters import job_reason_plain
from dataset_management.mapping import OVERRIDE_KEYS, label_missing_warning
from dataset_management.models import Dataset
from dataset_management.readers import FORMATS_SENTENCE
from dataset_management.readers.errors import names_listed


@extend_schema_field(OpenApiTypes.BINARY)
class UploadField(serializers.FileField):
    """A file part of a multipart request (documented as binary, so /api/docs/ offers a picker)."""


class ExpandableSerializer(serializers.ModelSerializer):
    """A representation whose `expandable` fields appear only when `?expand=` names them.

    The view puts the requested names in the context as `expand`; the fields are declared
    optional (not read-only) so the schema does not promise them in every answer.
    """

    expandable: dict[str, tuple[str, ...]] = {}  # ?expand= value -> the keys it adds

    @property
    def _readable_fields(self):
        expand = self.context.get("expand") or frozenset()
        hidden = {key for name, keys in self.expandable.items() if name not in expand
                  for key in keys}
        computed = set(self.computed_expansions())
        for field in super()._readable_fields:
            if field.field_name not in hidden and field.field_name not in computed:
                yield field

    def computed_expansions(self) -> tuple[str, ...]:
        """Expandable keys that to_representation fills itself rather than DRF's fields."""
        return ()


# --- Datasets -----------------------------------------------------------------------------------


class DatasetSerializer(ExpandableSerializer):
    """A dataset, the same in the list, the detail and the 201 of an upload."""

    expandable = {"report": ("report",)}

    report = serializers.JSONField(
        required=False,
        help_text="Only with ?expand=report: the validation report (dropped rows and why, "
        "duplicates, text lengths, label co-occurrence). It can be large, so lists leave it out.",
    )
    warnings = serializers.SerializerMethodField(
        help_text="What the person should know, e.g. that no label column was found, so the "
        "dataset is for prediction only and cannot train a model.",
    )

    class Meta:
        model = Dataset
        fields = [
            "id", "project", "name", "description", "original_filename", "file_format", "encoding",
            "text_fields", "label_field", "label_names", "is_multilabel", "row_count",
            "label_counts", "split_seed", "split_ratios", "split_sizes", "created_at",
            "updated_at", "report", "warnings",
        ]
        read_only_fields = [name for name in fields if name not in ("report", "warnings")]
        extra_kwargs = {
            "text_fields": {"help_text": "The columns joined into each article's text."},
            "label_field": {"help_text": "The column the labels were read from."},
            "project": {"help_text": "The id of the project it belongs to."},
            "label_counts": {"help_text": "Articles per label."},
            "split_sizes": {"help_text": "Articles in train, validation and test."},
            "split_ratios": {"help_text": "The train, validation and test fractions asked for."},
        }


    def get_warnings(self, dataset: Dataset) -> list[str]:
        if dataset.label_names:
            return []
        # Lists defer the report (large): name the columns only where it was read anyway.
        deferred = "report" in dataset.get_deferred_fields()
        columns = [] if deferred else (dataset.report or {}).get("columns") or []
        return [label_missing_warning(columns=columns, option='"label_column" in mapping')]


class DatasetUploadSerializer(serializers.Serializer):
    file = UploadField(help_text=f"{FORMATS_SENTENCE}.")
    name = serializers.CharField(max_length=200, required=False, allow_blank=True,
                                 help_text="Defaults to the file's name.")
    description = capped_text(required=False, allow_blank=True, default="")
    mapping = serializers.JSONField(
        required=False,
        help_text='Column overrides, e.g. {"title_column": "TI", "abstract_column": "AB", '
        '"label_column": "group", "label_separator": "|"}; also "text_column" (instead of an '
        'abstract), "split_column", "label_map" ({"old": "new"}), "unlabelled" (true), '
        '"no_label_rows" ("keep", the default, or "drop": multi-label rows without a label) '
        'and "other_means_none" (true: the label "other" means no label). '
        "Omit to use the detected mapping.",
    )
    split_ratios = serializers.ListField(
        child=serializers.FloatField(min_value=0, max_value=1), min_length=3, max_length=3,
        required=False, help_text="train, validation, test; must sum to 1 (default 0.8, 0.1, 0.1)",
    )
    seed = serializers.IntegerField(required=False, default=42,
                                    help_text="Seed of the train/validation/test split.")
    project = serializers.IntegerField(
        required=False, min_value=1,
        help_text="The id of the project it goes to (you need the maintainer role there). "
        "Required when you are in more than one project; otherwise your only project.",
    )

    def validate_mapping(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise serializers.ValidationError("Must be a JSON object.")
        unknown = sorted(set(value) - OVERRIDE_KEYS)
        if unknown:
            known = ", ".join(sorted(OVERRIDE_KEYS))
            raise serializers.ValidationError(
                f"Unknown option(s): {names_listed(unknown)}. Known: {known}."
            )
        return value

    def validate_split_ratios(self, value: list[float]) -> list[float]:
        if abs(sum(value) - 1.0) > 1e-6:
            raise serializers.ValidationError("The three ratios must sum to 1.")
        return value


# --- Models -------------------------------------------------------------------------------------


class MLModelSerializer(serializers.ModelSerializer):
    """A model, the same in the list, the detail and the 201 of POST /api/models/.

    Its full metrics are at /api/models/{id}/metrics/; its training is the job `latest_job_id`.
    """

    dataset_id = serializers.IntegerField(
        read_only=True, allow_null=True,
        help_text="The dataset it was trained on; null once that dataset is deleted.",
    )
    status_display = serializers.CharField(source="get_status_display", read_only=True)
    headline_metrics = serializers.SerializerMethodField(
        help_text="Test-set scores present for this model: micro_f1, macro_f1, weighted_f1, "
        "accuracy or subset_accuracy, hamming_loss, roc_auc_macro, and n (test articles).",
    )
    latest_job_id = serializers.IntegerField(
        read_only=True, allow_null=True,
        help_text="Its newest training job (the one to follow after POST /api/models/).",
    )

    class Meta:
        model = MLModel
        fields = [
            "id", "project", "name", "model_type", "dataset_id", "status", "status_display",
            "label_names", "is_multilabel", "parameters", "device_used", "device_plan",
            "library_versions", "headline_metrics", "latest_job_id", "created_at", "updated_at",
            "trained_at",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "parameters": {"help_text": "The training settings it was created with."},
            "device_used": {"help_text": "Where it trained, e.g. cpu, cuda or mps."},
            "project": {"help_text": "The id of the project it belongs to (its dataset's)."},
        }

    def get_headline_metrics(self, obj: MLModel) -> dict[str, float]:
        return model_headline_metrics(obj)


class ModelMetricsSerializer(serializers.Serializer):
    model_id = serializers.IntegerField()
    status = serializers.CharField()
    metrics = serializers.DictField(
        help_text="micro_f1, macro_f1, accuracy or subset_accuracy, per_label, confusion, "
        "confident_mistakes, thresholds (empty until the model is trained).",
    )


def _settings_help() -> str:
    """The API's documentation of `config`, written from the training schema."""
    lines = []
    for spec in user_settings():
        staff = " Staff only." if spec.who == STAFF else ""
        lines.append(f"`{spec.name}`: {spec.type.__name__}{spec.bounds}, default "
                     f"{spec.default!r}. {spec.help}{staff}")
    return ("Training settings; any left out take their defaults. Settings the deployment "
            "controls (model downloads, model folders) are refused.\n\n- " + "\n- ".join(lines))


class TrainingStartSerializer(serializers.Serializer):
    dataset = serializers.IntegerField(
        help_text="id of a dataset in one of your projects, where you are a maintainer or "
        "owner; the model and its job join that project.")
    model_type = serializers.ChoiceField(choices=sorted(REGISTRY))
    name = serializers.CharField(max_length=200, required=False, allow_blank=True,
                                 help_text='Defaults to "<dataset name> · <model type>".')
    config = serializers.JSONField(
        required=False, default=dict, help_text=_settings_help(),
    )

    def validate_config(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise serializers.ValidationError("Must be a JSON object.")
        user = getattr(self.context.get("request"), "user", None)
        try:
            return training_config_clean(value, staff=bool(getattr(user, "is_staff", False)))
        except TrainConfigError as exc:
            raise serializers.ValidationError(exc.errors) from exc


# --- Training jobs ------------------------------------------------------------------------------

# The name under which job querysets carry their model's project id.
JOB_PROJECT_ANNOTATION = "model_project_id"


class JobSerializer(ExpandableSerializer):
    """A training job, the same in the list, the detail, the 201 of a start and the 202 of a
    cancel or resume; its progress keys are the job page's (`progress`, `epoch`, `step`, `loss`).
    """

    expandable = {
        "history": ("history", "history_length", "history_reset"),
        "log_tail": ("log_tail",),
    }

    model_id = serializers.IntegerField(source="ml_model_id", read_only=True,
                                        help_text="The model this job trains.")
    project = serializers.SerializerMethodField(
        help_text="The id of the project it belongs to (its model's).",
    )
    status_display = serializers.CharField(source="get_status_display", read_only=True)
    phase_display = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField(help_text="Percent done, 0-100.")
    epoch = serializers.FloatField(source="current_epoch", read_only=True,
                                   help_text="Epochs done, fractional while one runs.")
    step = serializers.IntegerField(source="current_step", read_only=True,
                                    help_text="Optimisation steps done.")
    loss = serializers.FloatField(source="last_loss", read_only=True, allow_null=True,
                                  help_text="The newest training loss.")
    eta_seconds = serializers.FloatField(read_only=True, allow_null=True,
                                         help_text="Seconds left; null while unknown.")
    heartbeat_age_seconds = serializers.FloatField(
        read_only=True, allow_null=True,
        help_text="Seconds since the worker last reported; null before it starts.",
    )
    is_active = serializers.BooleanField(read_only=True, help_text="Queued or running.")
    is_resumable = serializers.BooleanField(
        read_only=True, help_text="Failed, stalled or cancelled: POST .../resume/ continues it.",
    )
    reason_plain = serializers.SerializerMethodField(
        help_text="What the status means and what to do, in plain words.",
    )
    history = serializers.ListField(
        child=serializers.DictField(), required=False,
        help_text="Only with ?expand=history: the loss and evaluation points after `since` "
        "(and `last`), for drawing the curves.",
    )
    history_length = serializers.IntegerField(
        required=False, help_text="Only with ?expand=history: how many points the job holds.",
    )
    history_reset = serializers.BooleanField(
        required=False,
        help_text="Only with ?expand=history: true when `since`/`last` no longer match and "
        "`history` is the whole history again.",
    )
    log_tail = serializers.CharField(
        required=False, help_text="Only with ?expand=log_tail: the end of the training log.",
    )

    class Meta:
        model = TrainingJob
        fields = [
            "id", "project", "model_id", "status", "status_display", "phase", "phase_display",
            "progress", "epoch", "total_epochs", "step", "total_steps", "eta_seconds", "loss",
            "heartbeat_at", "heartbeat_age_seconds", "attempt", "cancel_requested",
            "is_active", "is_resumable", "reason", "reason_plain", "config", "queue",
            "device_plan", "leaderboard", "created_at", "started_at", "finished_at", "updated_at",
            "history", "history_length", "history_reset", "log_tail",
        ]
        read_only_fields = fields[:-4]  # all but the expandable ones, which are optional
        extra_kwargs = {
            "reason": {"help_text": "Why it failed, stalled or was cancelled (a traceback "
                                    "when it crashed)."},
            "attempt": {"help_text": "1, and one more at each resume."},
            "config": {"help_text": "The training settings of this run."},
            "queue": {"help_text": "The broker queue its message went to: <prefix>training "
                                   "(CPU workers) or <prefix>training.gpu (GPU workers), chosen "
                                   "when it was queued or resumed (config.device_queue pins it)."},
            "leaderboard": {"help_text": "A model search's trials, best first: number, "
                                         "model_type, params, value (validation macro-F1), "
                                         "state, seconds, note. Empty for other jobs."},
        }

    def computed_expansions(self) -> tuple[str, ...]:
        return self.expandable["history"]

    def to_representation(self, instance: TrainingJob) -> dict[str, Any]:
        data = super().to_representation(instance)
        if "history" in (self.context.get("expand") or ()):
            data.update(job_history_window(
                instance.metrics_history, since=self.context.get("since", 0),
                last=self.context.get("last"),
            ))
        return data

    def get_phase_display(self, obj: TrainingJob) -> str:
        return job_phase_display(obj.phase)

    @extend_schema_field(OpenApiTypes.INT)
    def get_project(self, obj: TrainingJob) -> int:
        # Lists annotate it (api.views.job_rows) so no row loads its model for one column.
        annotated = obj.__dict__.get(JOB_PROJECT_ANNOTATION)
        return annotated if annotated is not None else obj.ml_model.project_id

    def get_progress(self, obj: TrainingJob) -> float:
        return round(obj.progress_percentage or 0.0, 2)

    def get_reason_plain(self, obj: TrainingJob) -> str:
        return job_reason_plain(status=obj.status, reason=obj.reason)


# --- Prediction ---------------------------------------------------------------------------------


class PredictInputSerializer(serializers.Serializer):
    """Exactly one of `text`, `texts` or `articles`.

    Up to SYNC_PREDICT_MAX_TEXTS texts are classified inline (200); more become a batch job on
    the inference worker (202 with the batch and its Location)."""

    text = capped_text(required=False, help_text="One text to classify (up to MAX_TEXT_CHARS "
                       "characters, 102,002 unless set).")
    texts = serializers.ListField(child=capped_text(), required=False, max_length=1000,
                                  help_text="Many texts (up to 1000, each up to MAX_TEXT_CHARS).")
    articles = ArticleSerializer(many=True, required=False,
                                 help_text="Title + abstract pairs (up to 1000).")
    threshold = serializers.ChoiceField(
        choices=["f1", "recall"], default="f1",
        help_text="Which per-label thresholds decide the labels: `f1` (tuned for each label's "
        "F1 on validation) or `recall` (set for the model's recall target on validation, "
        "0.95 unless trained otherwise: every label reaching its threshold, so more labels). "
        "A batch made of more than SYNC_PREDICT_MAX_TEXTS texts keeps the choice.")

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
        return [article_text(a["title"], a["abstract"]) for a in data["articles"]]

    def metadata_given(self) -> list[dict[str, Any]] | None:
        """Each article's metadata fields as given (None for `text` and `texts`)."""
        articles = self.validated_data.get("articles")
        if not articles:
            return None
        return [{k: v for k, v in a.items() if k in METADATA_FIELDS and v} for a in articles]

    def records_for_batch(self) -> list[dict[str, Any]]:
        """The same input as rows a batch file holds: {"text"} or {"title", "abstract"} (and
        the metadata given, under the names PubMed XML's records use)."""
        data = self.validated_data
        if data.get("articles"):
            return [{"title": a["title"].strip(), "abstract": a["abstract"].strip(), **meta}
                    for a, meta in zip(data["articles"], self.metadata_given() or [],
                                       strict=True)]
        return [{"text": text} for text in self.texts_to_classify()]


class PredictionSerializer(serializers.Serializer):
    labels = serializers.ListField(child=serializers.CharField(),
                                   help_text="The labels predicted for this text.")
    probabilities = serializers.DictField(child=serializers.FloatField(),
                                          help_text="Every label's probability.")


class PredictOutputSerializer(serializers.Serializer):
    model_id = serializers.IntegerField()
    calibrated = serializers.BooleanField(
        help_text="True: the probabilities went through a calibration map fitted on the "
        "validation split (with `select`, the default, the one of temperature, Platt or "
        "isotonic with the lowest out-of-fold ECE, kept only when it beat none beyond noise); "
        "the model's page states how often labels given about 0.9 were right on those "
        "held-out rows. False: no map is applied, the probabilities are the model's own: "
        "`select` kept none, the model was trained with calibration `none`, or saved before "
        "calibration existed.")
    threshold = serializers.CharField(help_text="The thresholds that chose the labels: "
                                      "`f1` or `recall`.")
    predictions = PredictionSerializer(many=True, help_text="One per text, in the input order.")
