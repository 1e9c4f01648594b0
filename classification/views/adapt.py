"""The page that starts an adapt job: "Adapt an encoder to your literature".

The form offers only what the person may read and train from (selectors scoped by the policy)
and the transformer encoders on this machine; classification.jobs.adapt.adapt_job_create checks
everything again and its refusals come back on the field they are about."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from classification import ml_models, selectors
from classification.batches.selectors import batch_job_list
from classification.jobs.adapt import adapt_job_create
from classification.models import BatchJob
from classification.views.models import availability
from dataset_management.models import Dataset
from projects import policy

# The service's setting names, as this form's fields are called.
FIELD_OF_SETTING = {"adapt_base": "base", "adapt_datasets": "datasets",
                    "adapt_batches": "batches", "adapt_training_only": "training_only"}
LOCAL = ("bundled", "cached")


def local_encoders() -> list[tuple[str, str]]:
    """Transformer kinds whose weights are on this machine: adapting never downloads from the
    page. `custom` (a server folder, staff only) and `adapted` are for the command line."""
    return [(key, spec.label) for key, spec in ml_models.REGISTRY.items()
            if spec.kind == "transformer" and key not in ("custom", "adapted")
            and availability(key)["status"] in LOCAL]


def _setting_field(name: str, field_class: type[forms.Field]) -> forms.Field:
    spec = ml_models.SETTINGS[name]
    return field_class(min_value=spec.minimum, max_value=spec.maximum, initial=spec.default,
                       label=spec.label or name.replace("_", " ").capitalize(),
                       help_text=spec.help)


class AdaptForm(forms.Form):
    name = forms.CharField(max_length=200, required=False,
                           help_text="Leave empty to name it after the first dataset.")
    base = forms.ChoiceField(choices=[], label="Base encoder")
    datasets = forms.ModelMultipleChoiceField(
        queryset=Dataset.objects.none(), widget=forms.CheckboxSelectMultiple,
        help_text="Their test rows are never read.")
    batches = forms.ModelMultipleChoiceField(
        queryset=BatchJob.objects.none(), widget=forms.CheckboxSelectMultiple, required=False,
        help_text="Finished batches of this project; an article equal to a test row of a "
        "picked dataset is left out.")
    mlm_probability = _setting_field("mlm_probability", forms.FloatField)
    epochs = _setting_field("epochs", forms.IntegerField)
    training_only = forms.BooleanField(
        required=False, initial=True, label=ml_models.SETTINGS["adapt_training_only"].label,
        help_text=ml_models.SETTINGS["adapt_training_only"].help)

    def __init__(self, *args: Any, user: Any, project: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["base"].choices = local_encoders()
        self.fields["datasets"].queryset = selectors.training_dataset_choices(
            user=user, project=project).order_by("name")
        self.fields["batches"].queryset = batch_job_list(user=user, project=project).filter(
            status=BatchJob.Status.COMPLETED)

    def config(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {"adapt_base": data["base"], "mlm_probability": data["mlm_probability"],
                "epochs": data["epochs"], "adapt_training_only": data["training_only"]}

    def refusal_show(self, exc: ml_models.TrainConfigError) -> None:
        for setting, errors in exc.errors.items():
            field = FIELD_OF_SETTING.get(setting, setting)
            self.add_error(field if field in self.fields else None, " ".join(errors))


@login_required
def adapt_new(request: HttpRequest) -> HttpResponse:
    policy.require(user=request.user, action=policy.Action.TRAIN, project=request.project)
    form = AdaptForm(request.POST or None, user=request.user, project=request.project)
    if request.method == "POST" and form.is_valid():
        try:
            job = adapt_job_create(owner=request.user, datasets=list(form.cleaned_data[
                "datasets"]), batches=list(form.cleaned_data["batches"]),
                name=form.cleaned_data["name"].strip(), config=form.config())
        except ml_models.TrainConfigError as exc:
            form.refusal_show(exc)
        except ValueError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "Adaptation queued. This page updates as it runs.")
            return redirect("classification:job_detail", pk=job.pk)
    return render(request, "classification/adapt_new.html", {
        "form": form, "has_datasets": form.fields["datasets"].queryset.exists(),
        "has_encoders": bool(form.fields["base"].choices)})
