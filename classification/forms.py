from __future__ import annotations

from typing import Any

from django import forms

from classification.engine.types import article_text
from classification.ml_models import REGISTRY
from classification.model_paths import model_path_problem
from dataset_management.models import Dataset

# Presets name the trade-off, not the knobs: people pick "how long can I wait", not a batch size.
PRESETS: dict[str, dict[str, Any]] = {
    "quick": {
        "label": "Quick (M1-safe)",
        "help": "1 epoch, short inputs, small batches: minutes on a laptop CPU, low memory.",
        "config": {"epochs": 1, "batch_size": 8, "max_length": 128, "learning_rate": 5e-5,
                   "gradient_accumulation_steps": 2, "early_stopping_patience": 1},
    },
    "balanced": {
        "label": "Balanced",
        "help": "3 epochs at 256 tokens: the usual choice.",
        "config": {"epochs": 3, "batch_size": 16, "max_length": 256, "learning_rate": 5e-5,
                   "gradient_accumulation_steps": 1, "early_stopping_patience": 2},
    },
    "best": {
        "label": "Best",
        "help": "5 epochs at 512 tokens with early stopping: slowest, usually most accurate.",
        "config": {"epochs": 5, "batch_size": 16, "max_length": 512, "learning_rate": 3e-5,
                   "gradient_accumulation_steps": 1, "early_stopping_patience": 2},
    },
}
ADVANCED_FIELDS = (
    "epochs", "batch_size", "learning_rate", "max_length", "gradient_accumulation_steps",
    "early_stopping_patience", "gradient_checkpointing", "use_mps", "allow_download",
    "model_path",
)


class TrainingJobCreateForm(forms.Form):
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.none(), empty_label=None)
    model_type = forms.ChoiceField(choices=[(k, s.label) for k, s in REGISTRY.items()])
    name = forms.CharField(max_length=200, required=False,
                           help_text="Leave empty to name it after the dataset and model type.")
    preset = forms.ChoiceField(
        choices=[(k, p["label"]) for k, p in PRESETS.items()], initial="balanced",
        widget=forms.RadioSelect,
    )
    # Advanced: empty means "use the preset's value".
    epochs = forms.IntegerField(min_value=1, max_value=50, required=False)
    batch_size = forms.IntegerField(min_value=1, max_value=256, required=False)
    learning_rate = forms.FloatField(min_value=1e-7, max_value=1.0, required=False)
    max_length = forms.IntegerField(min_value=16, max_value=512, required=False)
    gradient_accumulation_steps = forms.IntegerField(min_value=1, max_value=64, required=False)
    early_stopping_patience = forms.IntegerField(min_value=0, max_value=20, required=False)
    gradient_checkpointing = forms.BooleanField(required=False,
                                                help_text="Less memory, about 30% slower.")
    use_mps = forms.BooleanField(required=False, label="Use Apple GPU (MPS)",
                                 help_text="Only on Apple Silicon; checked by a smoke test first.")
    allow_download = forms.BooleanField(
        required=False, help_text="Let this job download the model from Hugging Face."
    )
    model_path = forms.CharField(required=False, max_length=500, label="Local model folder",
                                 help_text="Only for the custom type: a folder with config.json.")

    def __init__(self, *args: Any, owner: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["dataset"].queryset = Dataset.objects.filter(owner=owner)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        dataset = data.get("dataset")
        if dataset is not None and not dataset.is_trainable:
            self.add_error("dataset", "This dataset needs at least two labels to train on.")
        if data.get("model_type") == "custom" and not data.get("model_path"):
            self.add_error("model_path", "The custom type needs a local model folder.")
        problem = model_path_problem(data.get("model_path") or "")
        if problem:
            self.add_error("model_path", problem)
        return data

    def training_config(self) -> dict[str, Any]:
        """The preset's values, overridden by any advanced field the person filled in."""
        data = self.cleaned_data
        config = dict(PRESETS[data["preset"]]["config"])
        for key in ADVANCED_FIELDS:
            value = data.get(key)
            if value not in (None, "", False):
                config[key] = value
        config["preset"] = data["preset"]
        return config

    def model_name(self) -> str:
        data = self.cleaned_data
        return data.get("name") or f"{data['dataset'].name} · {data['model_type']}"


class ClassifyForm(forms.Form):
    title = forms.CharField(max_length=2000, required=False)
    abstract = forms.CharField(widget=forms.Textarea, required=False, max_length=100_000)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not (data.get("title", "").strip() or data.get("abstract", "").strip()):
            raise forms.ValidationError("Give a title, an abstract, or both.")
        return data

    def text(self) -> str:
        return article_text(self.cleaned_data.get("title"), self.cleaned_data.get("abstract"))


class FileUploadForm(forms.Form):
    file = forms.FileField(help_text="CSV, TSV, XLSX, JSON, JSONL, RIS or PubMed (nbib).")
