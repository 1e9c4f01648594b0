"""The upload form: a file, its name, and optional overrides of what was detected."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.conf import settings

from .mapping import NO_LABEL_DROP, NO_LABEL_KEEP
from .splitting import split_ratios_validate


class DatasetUploadForm(forms.Form):
    file = forms.FileField()
    name = forms.CharField(max_length=200)
    description = forms.CharField(widget=forms.Textarea, required=False)
    title_column = forms.CharField(required=False)
    abstract_column = forms.CharField(required=False, help_text="or a single free-text column")
    label_column = forms.CharField(required=False)
    split_column = forms.CharField(required=False)
    label_separator = forms.CharField(
        required=False, max_length=5, strip=False,
        help_text="Blank: detect. 'none': one label per row.",
    )
    label_map = forms.CharField(
        required=False, help_text='JSON, e.g. {"0": "cardiovascular", "1": "oncological"}'
    )
    unlabelled = forms.BooleanField(required=False, help_text="Prediction only: ignore labels.")
    no_label_rows = forms.ChoiceField(
        required=False, initial=NO_LABEL_KEEP,
        choices=[(NO_LABEL_KEEP, "Keep as examples of “none of these”"),
                 (NO_LABEL_DROP, "Drop them")],
        help_text="Multi-label: rows with an empty label cell or a label such as “none”.",
    )
    other_means_none = forms.BooleanField(
        required=False, help_text="Multi-label: the label “other” means “none of these”.")
    split_ratios = forms.CharField(initial="0.8,0.1,0.1")
    seed = forms.IntegerField(initial=42)

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        # Checked on the declared size before any byte is parsed; the service re-checks bytes.
        if upload.size > settings.MAX_UPLOAD_SIZE:
            raise forms.ValidationError(
                f"The file is {upload.size / 2**20:.1f} MB; the limit is "
                f"{settings.MAX_UPLOAD_SIZE / 2**20:.0f} MB."
            )
        return upload

    def clean_label_map(self) -> dict[str, str] | None:
        raw = self.cleaned_data["label_map"].strip()
        if not raw:
            return None
        try:
            value = json.loads(raw)
        except ValueError:
            raise forms.ValidationError("Label map must be a JSON object.") from None
        if not isinstance(value, dict):
            raise forms.ValidationError("Label map must be a JSON object.")
        return {str(k): str(v) for k, v in value.items()}

    def clean_split_ratios(self) -> tuple[float, float, float]:
        try:
            return split_ratios_validate(
                [float(x) for x in self.cleaned_data["split_ratios"].split(",")]
            )
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None

    def mapping_overrides(self) -> dict[str, Any]:
        data = self.cleaned_data
        keys = ("title_column", "abstract_column", "label_column", "split_column",
                "label_separator", "label_map", "unlabelled", "no_label_rows",
                "other_means_none")
        return {k: data[k] for k in keys if data.get(k) not in (None, "", False)}


class DatasetConfirmForm(forms.Form):
    """The preview's create step. A file without a label column makes a dataset that can never
    train a model, so creating one takes an explicit "prediction only"."""

    prediction_only = forms.BooleanField(
        required=False, label="Create it for prediction only (it cannot train a model)",
    )

    def __init__(self, *args: Any, labelled: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.labelled = labelled

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not self.labelled and not data.get("prediction_only"):
            self.add_error("prediction_only", (
                "This file has no label column. Tick “prediction only” to create it without "
                "labels, or choose its label column and re-check."
            ))
        return data
