"""The form that starts a screening session in the current project, the simulation form, and
the one schema of every numeric screening setting's range."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from django import forms
from django.db.models import QuerySet

from screening import stopping_rules
from screening.models import StoppingRule

# Every numeric screening setting and its range, read by the page's forms, the API (which binds
# those forms: out of range is a 400 naming the field) and the simulate_screening command. An
# upper bound for each: an unbounded integer reached PostgreSQL as ranker_every=10**12 and
# overflowed its column (a 500). Retraining after more than 10,000 decisions, or a patience of
# more than 100,000 records, means "never" on any collection MedLitBot imports.
SETTING_RANGES: dict[str, tuple[type, float, float]] = {
    "reviewers_per_record": (int, 1, 2),
    "ranker_every": (int, 1, 10_000),
    "recall_target": (float, 0.01, 0.999),
    "confidence": (float, 0.5, 0.999),
    "seeds": (int, 1, 20),
    "every": (int, 1, 10_000),
    "patience": (int, 1, 100_000),
}


def setting_help(name: str) -> str:
    kind, low, high = SETTING_RANGES[name]
    return f"{kind(low)} to {kind(high)}"


def setting_field(name: str, **kwargs: Any) -> forms.Field:
    """The form field of a numeric setting, bounded by SETTING_RANGES."""
    kind, low, high = SETTING_RANGES[name]
    field = forms.IntegerField if kind is int else forms.FloatField
    kwargs.setdefault("help_text", setting_help(name))
    return field(min_value=kind(low), max_value=kind(high), **kwargs)


def setting_parse(name: str, value: Any) -> int | float:
    """A setting read from the command line or a script: ValueError naming it and its range."""
    kind, low, high = SETTING_RANGES[name]
    try:
        number = kind(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be a number from {setting_help(name)}, not "
                         f"{value!r}.") from None
    if not low <= number <= high:  # NaN fails both comparisons and lands here too
        raise ValueError(f"{name} must lie between {setting_help(name)}; got {value}.")
    return number


def setting_argument(name: str) -> Callable[[str], int | float]:
    """An argparse `type` for a setting: the command refuses what the form refuses."""
    def parse(text: str) -> int | float:
        try:
            return setting_parse(name, text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    parse.__name__ = name
    return parse


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
                                       ("least_certain", "Least certain first")],
                              initial="most_likely")
    reviewers_per_record = setting_field("reviewers_per_record", initial=1,
                                         help_text="1 or 2 (2: blind dual screening)")
    ranker_every = setting_field("ranker_every", initial=10)
    recall_target = setting_field("recall_target", initial=0.95)
    confidence = setting_field("confidence", initial=0.95)
    stopping_rule = forms.ChoiceField(choices=StoppingRule.choices, required=False,
                                      initial=stopping_rules.DEFAULT_RULE)

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
        unknown = labels_unknown_to(dataset=data.get("dataset"),
                                    labels=_labels_listed(data.get("labels") or ""))
        if unknown:
            self.add_error("labels", labels_unknown_message(dataset=data["dataset"],
                                                            unknown=unknown))
        return data

    def session_kwargs(self) -> dict[str, Any]:
        data = dict(self.cleaned_data)
        data["labels"] = _labels_listed(data["labels"])
        return data


def _labels_listed(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def labels_unknown_to(*, dataset: Any, labels: list[str]) -> list[str]:
    """The labels a labelled dataset does not have, in the order given.

    A labelled dataset's records keep its rows' labels as their truth, which can say nothing
    of a label it lacks; such a label is most often a slip ("oncology" for "oncological"),
    and a session started on it could never be renamed. An unlabelled dataset (prediction-only)
    and a batch carry no truth: any label can be screened for.
    """
    known = set(getattr(dataset, "label_names", None) or [])
    return [label for label in labels if label not in known] if known else []


def labels_unknown_message(*, dataset: Any, unknown: list[str]) -> str:
    return (f"Dataset “{dataset.name}” has no label {', '.join(unknown)}; it is labelled "
            f"{', '.join(dataset.label_names)}. Screen for those, or screen an unlabelled "
            "collection (a dataset imported without labels, or a batch) for new ones.")


class LabelledDatasetChoice(forms.ModelChoiceField):
    """Each dataset with its labels, so the person sees which label it can be replayed for."""

    def label_from_instance(self, obj: Any) -> str:
        labels = ", ".join(obj.label_names or []) or "not labelled"
        return f"{obj.name} ({labels})"


class SimulationForm(forms.Form):
    dataset = LabelledDatasetChoice(queryset=None, help_text="A dataset labelled for the label")
    label = forms.CharField(max_length=200, help_text="One of the dataset's labels")
    recall_target = setting_field("recall_target", initial=0.95)
    confidence = setting_field("confidence", initial=0.95)
    seeds = setting_field("seeds", initial=5, help_text="One replay per seed (1 to 20)")
    every = setting_field("every", initial=10, help_text="Refit the ranker after this many "
                          f"decisions ({setting_help('every')})")
    patience = setting_field("patience", initial=50, help_text="Switch to random sampling "
                             "after this many irrelevant records in a row "
                             f"({setting_help('patience')})")

    def __init__(self, *args: Any, datasets: QuerySet, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["dataset"].queryset = datasets
