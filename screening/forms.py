"""The form that starts a screening session in the current project."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db.models import QuerySet


class BatchChoice(forms.ModelChoiceField):
    """A finished batch by its file, model and size, as the Classify page lists it."""

    def label_from_instance(self, obj: Any) -> str:
        return (f"{obj.filename} · {obj.ml_model.name} · {obj.total or 0} articles · "
                f"{obj.created_at:%Y-%m-%d %H:%M}")


class SessionForm(forms.Form):
    """The page's form, and the API's checks (screening.api binds it to the JSON body)."""

    name = forms.CharField(max_length=200)
    # What it screens: one of the two (clean() says so when both or neither are chosen).
    dataset = forms.ModelChoiceField(queryset=None, required=False,
                                     help_text="An imported dataset, labelled or not")
    batch = BatchChoice(queryset=None, required=False,
                        help_text="Or a finished batch: the articles it classified")
    labels = forms.CharField(help_text="Comma-separated, e.g. oncological, cardiovascular")
    starting_model = forms.ModelChoiceField(queryset=None, required=False,
                                            empty_label="None (cold start)")
    order = forms.ChoiceField(choices=[("most_likely", "Most likely first"),
                                       ("least_certain", "Least certain first")])
    reviewers_per_record = forms.TypedChoiceField(choices=[(1, "1"), (2, "2")], coerce=int)
    ranker_every = forms.IntegerField(min_value=1, initial=10)
    recall_target = forms.FloatField(min_value=0.01, max_value=0.999, initial=0.95)
    confidence = forms.FloatField(min_value=0.5, max_value=0.999, initial=0.95)

    def __init__(self, *args: Any, datasets: QuerySet, batches: QuerySet, models: QuerySet,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["dataset"].queryset = datasets
        self.fields["batch"].queryset = batches
        self.fields["starting_model"].queryset = models

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if (data.get("dataset") is None) == (data.get("batch") is None) and not (
                self.has_error("dataset") or self.has_error("batch")):
            raise forms.ValidationError("Choose one collection to screen: a dataset or a "
                                        "finished batch.")
        return data

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
