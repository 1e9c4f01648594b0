"""The form that starts a screening session in the current project."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db.models import QuerySet


class SessionForm(forms.Form):
    name = forms.CharField(max_length=200)
    dataset = forms.ModelChoiceField(queryset=None)
    labels = forms.CharField(help_text="Comma-separated, e.g. oncological, cardiovascular")
    starting_model = forms.ModelChoiceField(queryset=None, required=False,
                                            empty_label="None (cold start)")
    order = forms.ChoiceField(choices=[("most_likely", "Most likely first"),
                                       ("least_certain", "Least certain first")])
    reviewers_per_record = forms.TypedChoiceField(choices=[(1, "1"), (2, "2")], coerce=int)
    ranker_every = forms.IntegerField(min_value=1, initial=10)
    recall_target = forms.FloatField(min_value=0.01, max_value=0.999, initial=0.95)
    confidence = forms.FloatField(min_value=0.5, max_value=0.999, initial=0.95)

    def __init__(self, *args: Any, datasets: QuerySet, models: QuerySet, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["dataset"].queryset = datasets
        self.fields["starting_model"].queryset = models

    def session_kwargs(self) -> dict[str, Any]:
        data = dict(self.cleaned_data)
        data["labels"] = [x.strip() for x in data["labels"].split(",") if x.strip()]
        return data


class LabelledDatasetChoice(forms.ModelChoiceField):
    """Each dataset with its labels, so the person sees which label it can be replayed for."""

    def label_from_instance(self, obj: Any) -> str:
        labels = ", ".join(obj.label_names or []) or "not labelled"
        return f"{obj.name} ({labels})"


class SimulationForm(forms.Form):
    dataset = LabelledDatasetChoice(queryset=None, help_text="A dataset labelled for the label")
    label = forms.CharField(max_length=200, help_text="One of the dataset's labels")
    recall_target = forms.FloatField(min_value=0.01, max_value=0.999, initial=0.95)
    confidence = forms.FloatField(min_value=0.5, max_value=0.999, initial=0.95)
    seeds = forms.IntegerField(min_value=1, max_value=20, initial=5,
                               help_text="One replay per seed (1 to 20)")
    every = forms.IntegerField(min_value=1, initial=10,
                               help_text="Refit the ranker after this many decisions")
    patience = forms.IntegerField(min_value=1, initial=50, help_text="Switch to random "
                                  "sampling after this many irrelevant records in a row")

    def __init__(self, *args: Any, datasets: QuerySet, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["dataset"].queryset = datasets
