from __future__ import annotations

from typing import Any

from django import forms

from classification.engine.schema import (
    STAFF,
    TrainConfigError,
    training_config_clean,
    user_settings,
)
from classification.engine.types import article_text
from classification.jobs.adapt_encoders import ADAPTED, adapted_encoder_choices
from classification.ml_models import REGISTRY
from classification.mlmodels.thresholds import THRESHOLD_F1, THRESHOLDS
from classification.selectors import training_dataset_choices
from classification.services import training_model_path_errors
from dataset_management.models import Dataset
from dataset_management.readers import FORMATS_SENTENCE

# Presets name the trade-off, not the knobs: people pick "how long can I wait", not a batch size.
# The learning rate is the model kind's (ModelSpec.learning_rate), not the preset's: one step
# size cannot suit both a 22M-parameter MiniLM and a 110M BERT-base.
PRESETS: dict[str, dict[str, Any]] = {
    "quick": {
        "label": "Quick (M1-safe)",
        "help": "1 epoch at 128 tokens, small batches: minutes on a laptop CPU, low memory. "
                "MiniLM scored above TF-IDF with it on the demo data's single-label rows "
                "(macro-F1 0.948 against 0.936).",
        "config": {"epochs": 1, "batch_size": 8, "max_length": 128,
                   "gradient_accumulation_steps": 2, "early_stopping_patience": 1},
    },
    "balanced": {
        "label": "Balanced",
        "help": "3 epochs at 256 tokens: the usual choice.",
        "config": {"epochs": 3, "batch_size": 16, "max_length": 256,
                   "gradient_accumulation_steps": 1, "early_stopping_patience": 2},
    },
    "best": {
        "label": "Best",
        "help": "5 epochs at 512 tokens with early stopping: slowest, usually most accurate.",
        "config": {"epochs": 5, "batch_size": 16, "max_length": 512,
                   "gradient_accumulation_steps": 1, "early_stopping_patience": 2},
    },
}
def _setting_field(spec: Any) -> forms.Field:
    """A form input for one schema setting. Numbers stay text until the schema parses them, so
    the form shows exactly the messages the API and the CLI give for the same value."""
    if spec.type is bool:
        return forms.BooleanField(required=False, label=spec.label, help_text=spec.help)
    if spec.choices:
        # A select whose value stays text: the schema checks it, with the API's and CLI's
        # message. Empty: the setting's default.
        shown = ", ".join(spec.default) if isinstance(spec.default, list) else spec.default
        options = [("", f"{shown} (default)"),
                   *((c, c) for c in spec.choices if c != shown)]
        return forms.CharField(required=False, label=spec.label, help_text=spec.help,
                               widget=forms.Select(choices=options))
    if spec.type is str:
        return forms.CharField(required=False, max_length=500, label=spec.label,
                               help_text=spec.help)
    default = "kind's default" if spec.default is None else f"{spec.default:g}"
    attrs = {"min": f"{spec.minimum:g}", "max": f"{spec.maximum:g}",
             "step": "1" if spec.type is int else "any", "placeholder": default}
    return forms.CharField(required=False, label=spec.label, help_text=spec.help,
                           widget=forms.NumberInput(attrs=attrs))


class TrainingJobCreateForm(forms.Form):
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.none(), empty_label=None)
    model_type = forms.ChoiceField(
        choices=[(k, s.label) for k, s in REGISTRY.items() if s.offered])
    name = forms.CharField(max_length=200, required=False,
                           help_text="Leave empty to name it after the dataset and model type.")
    preset = forms.ChoiceField(
        choices=[(k, p["label"]) for k, p in PRESETS.items()], initial="balanced",
        widget=forms.RadioSelect,
    )

    def __init__(self, *args: Any, user: Any, project: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.staff = bool(getattr(user, "is_staff", False))
        # The labelled datasets of the (current) project, if the person may train there: a
        # dataset posted from elsewhere is "not a valid choice".
        self.fields["dataset"].queryset = training_dataset_choices(user=user, project=project)
        # Each adapted encoder the person can see is a base to fine-tune: "adapted:<its id>".
        self.encoder_model_id = 0
        self.fields["model_type"].choices = [
            *self.fields["model_type"].choices,
            *((f"{ADAPTED}:{e.pk}", f"Adapted encoder: {e.name}")
              for e in adapted_encoder_choices(user=user, project=project))]
        # Advanced: empty means "use the preset's value". Derived from the training schema.
        for spec in user_settings(advanced_only=True):
            if spec.who != STAFF or self.staff:
                self.fields[spec.name] = _setting_field(spec)

    @property
    def number_fields(self) -> list[forms.BoundField]:
        return [self[s.name] for s in user_settings(advanced_only=True)
                if s.type in (int, float) and s.name in self.fields]

    @property
    def choice_fields(self) -> list[forms.BoundField]:
        return [self[s.name] for s in user_settings(advanced_only=True)
                if s.choices and s.name in self.fields]

    @property
    def flag_fields(self) -> list[forms.BoundField]:
        return [self[s.name] for s in user_settings(advanced_only=True)
                if s.type is bool and s.name in self.fields]

    def clean_model_type(self) -> str:
        """"adapted:<id>" is the adapted type fine-tuning that encoder."""
        value = self.cleaned_data["model_type"]
        if value.startswith(f"{ADAPTED}:"):
            self.encoder_model_id = int(value.partition(":")[2])
            return ADAPTED
        return value

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        dataset = data.get("dataset")
        if dataset is not None and not dataset.is_trainable:
            self.add_error("dataset", "This dataset needs at least two labels to train on.")
        # The service's own rule, asked here so the refusal shows on its field; a person who
        # may not name a folder sees it on the type they chose.
        for name, errors in training_model_path_errors(
                model_type=data.get("model_type") or "", config=data, staff=self.staff).items():
            for error in errors:
                self.add_error(name if name in self.fields else "model_type", error)
        try:
            self.settings = training_config_clean(
                {s.name: data.get(s.name) for s in user_settings(advanced_only=True)
                 if s.name in self.fields and data.get(s.name) not in (None, "", False)},
                staff=self.staff,
            )
        except TrainConfigError as exc:
            for name, errors in exc.errors.items():
                for error in errors:
                    self.add_error(name if name in self.fields else None, error)
        return data

    def training_config(self) -> dict[str, Any]:
        """The preset's values, overridden by any advanced field the person filled in."""
        config = dict(PRESETS[self.cleaned_data["preset"]]["config"])
        config.update(self.settings)
        config["preset"] = self.cleaned_data["preset"]
        if self.encoder_model_id:
            config["encoder_model_id"] = self.encoder_model_id
        return config

    def model_name(self) -> str:
        """The name the person gave; '' lets training_job_create give the default one."""
        return self.cleaned_data.get("name") or ""


def _threshold_field() -> forms.ChoiceField:
    # Not required: a form sent without it (older pages, scripts) keeps the F1 thresholds.
    return forms.ChoiceField(choices=[(t, t) for t in THRESHOLDS], required=False,
                             initial=THRESHOLD_F1, label="Labels chosen by")


class ThresholdMixin:
    def threshold_chosen(self) -> str:
        return self.cleaned_data.get("threshold") or THRESHOLD_F1  # type: ignore[attr-defined]


class ClassifyForm(ThresholdMixin, forms.Form):
    title = forms.CharField(max_length=2000, required=False)
    abstract = forms.CharField(widget=forms.Textarea, required=False, max_length=100_000)
    threshold = _threshold_field()

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not (data.get("title", "").strip() or data.get("abstract", "").strip()):
            raise forms.ValidationError("Give a title, an abstract, or both.")
        return data

    def text(self) -> str:
        return article_text(self.cleaned_data.get("title"), self.cleaned_data.get("abstract"))


class FileUploadForm(forms.Form):
    file = forms.FileField(help_text=f"{FORMATS_SENTENCE}.")


class BatchForm(ThresholdMixin, FileUploadForm):
    top_terms = forms.BooleanField(
        required=False, label="Add a top_terms column",
        help_text="The words that drove each label, per article. Instant for TF-IDF models; "
        "about 1–2 s per article for a transformer.")
    threshold = _threshold_field()


class SearchForm(forms.Form):
    """Find the best model: a dataset, a time budget and the kinds to try."""

    dataset = forms.ModelChoiceField(queryset=Dataset.objects.none(), empty_label=None)
    time_budget_minutes = forms.FloatField(
        min_value=0.1, max_value=1440, initial=10, label="Time budget (minutes)",
        help_text="Trials stop when it is spent; the best model found by then is kept. "
        "At least one trial always finishes, so a search never ends empty-handed.")
    candidates = forms.MultipleChoiceField(
        choices=[], widget=forms.CheckboxSelectMultiple, label="Candidates",
        help_text="One kind makes a plain hyperparameter search for it.")
    ensemble = forms.BooleanField(
        required=False, initial=True, label="Consider an ensemble",
        help_text="Of the best model of each kind, kept only when it beats them on validation.")
    name = forms.CharField(max_length=200, required=False,
                           help_text="Leave empty to name it after the dataset.")

    def __init__(self, *args: Any, user: Any, available: list[str], project: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["dataset"].queryset = training_dataset_choices(user=user, project=project)
        self.fields["candidates"].choices = [(k, REGISTRY[k].label) for k in available]
        self.fields["candidates"].initial = list(available)

    def clean_dataset(self) -> Dataset:
        dataset = self.cleaned_data["dataset"]
        if not dataset.is_trainable:
            raise forms.ValidationError("This dataset needs at least two labels to train on.")
        return dataset
