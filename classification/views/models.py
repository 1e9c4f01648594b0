from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_POST

from classification import ml_models, selectors, services
from classification.estimates import estimator_data
from classification.forms import PRESETS, FileUploadForm, SearchForm, TrainingJobCreateForm
from classification.jobs.adapt_encoders import adapted_encoder_choices
from classification.jobs.ensembles import ensemble_create as ensemble_create_service
from classification.jobs.searches import search_create
from classification.mlmodels.export import ExportRefused, mlmodel_export_stream
from classification.mlmodels.searches import search_candidates_available
from classification.models import MLModel, TrainingJob
from classification.quality import quality_warnings
from classification.views import compare
from classification.views.presenters import (
    adapted_encoder_cards,
    job_settings,
    measured_on_different_rows,
    metric_rows,
    scored_on_different_test_rows,
    test_rows_measured,
)
from classification.views.reliability import calibration_panel
from core.paging import page_of
from core.zipstream import zip_directory_stream
from projects import policy


def model_get(request: HttpRequest, pk: int, action: str = policy.Action.VIEW) -> MLModel:
    """The model in any of the person's projects: 404 outside them, 403 below `action`'s role."""
    return policy.object_get(MLModel.objects.select_related("dataset"), user=request.user,
                             action=action, pk=pk)


@login_required
def model_list(request: HttpRequest) -> HttpResponse:
    rows = selectors.mlmodel_list_rows(user=request.user, project=request.project)
    page = page_of(rows, request.GET.get("page"))
    return render(request, "classification/model_list.html",
                  {"models": page.object_list, "page": page})


@login_required
def model_new(request: HttpRequest) -> HttpResponse:
    # Training happens in the current project: a role that may not train there is refused
    # (403 naming the role), whether the page was offered or the POST forged.
    policy.require(user=request.user, action=policy.Action.TRAIN, project=request.project)
    form = TrainingJobCreateForm(request.POST or None, user=request.user,
                                 project=request.project,
                                 initial={"dataset": request.GET.get("dataset")})
    if request.method == "POST" and form.is_valid():
        try:
            job = services.training_job_create(
                owner=request.user,
                dataset=form.cleaned_data["dataset"],
                model_type=form.cleaned_data["model_type"],
                name=form.model_name(),
                config=form.training_config(),
            )
        except (ValueError, ml_models.ModelUnavailableError) as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "Training queued. This page updates as it runs.")
            return redirect("classification:job_detail", pk=job.pk)
    datasets = form.fields["dataset"].queryset.only(
        "id", "name", "row_count", "split_sizes", "label_names"
    )
    types = [{**spec.as_dict(), "availability": availability(key)}
             for key, spec in ml_models.REGISTRY.items() if spec.offered]
    encoders = list(adapted_encoder_choices(user=request.user, project=request.project))
    estimator, plan, measured_types = estimator_data(
        datasets=datasets, presets={k: p["config"] for k, p in PRESETS.items()},
        encoders=encoders,
    )
    return render(request, "classification/model_new.html", {
        "form": form,
        "types": types,
        "encoders": adapted_encoder_cards(encoders),
        "presets": PRESETS,
        "plan": plan,
        "measured_types": measured_types,
        "estimator": estimator,
        "has_datasets": bool(datasets),
    })


@login_required
def search_new(request: HttpRequest) -> HttpResponse:
    """Find the best model: one job that tries and tunes candidates within a time budget."""
    policy.require(user=request.user, action=policy.Action.TRAIN, project=request.project)
    available = search_candidates_available()
    form = SearchForm(request.POST or None, user=request.user, project=request.project,
                      available=available, initial={"dataset": request.GET.get("dataset")})
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            job = search_create(owner=request.user, dataset=data["dataset"],
                                time_budget_minutes=data["time_budget_minutes"],
                                candidates=data["candidates"], ensemble=data["ensemble"],
                                name=data["name"])
        except ValueError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "Search queued. Its trials appear here as they finish.")
            return redirect("classification:job_detail", pk=job.pk)
    unavailable = [(spec.label, availability(key)["detail"])
                   for key, spec in ml_models.REGISTRY.items()
                   if spec.offered and key != "custom" and key not in available]
    return render(request, "classification/search_new.html", {
        "form": form, "unavailable": unavailable,
        "has_datasets": form.fields["dataset"].queryset.exists(),
    })


AVAILABILITY_WORDS = {
    "bundled": ("bundled", "Ships with MedLitBot: works offline."),
    "cached": ("cached", "Already downloaded to this machine: works offline."),
    "download": ("download needed", "Not on this machine yet: downloaded when training starts "
                 "if this server allows it (ALLOW_MODEL_DOWNLOAD), or pick a bundled type."),
    "unreachable": ("unreachable", "Not on this machine, and it cannot be downloaded now."),
}


def availability(model_type: str) -> dict[str, str]:
    """The registry's answer in a person's words; "custom" is whatever folder they give."""
    info = ml_models.model_availability(model_type)
    if model_type == "custom":
        return {"status": "local", "label": "your folder", "hint": "", "detail": info["detail"]}
    label, hint = AVAILABILITY_WORDS.get(info["status"], (info["status"], ""))
    return {"status": info["status"], "label": label, "hint": hint, "detail": info["detail"]}


def confusion_tables(confusion: Any) -> list[dict[str, Any]]:
    """Heatmap-ready tables: one N x N table (single-label) or one 2 x 2 per label (multi-label)."""
    if not confusion:
        return []
    if isinstance(confusion, dict) and "matrix" in confusion:
        return [_heat(title="", labels=confusion["labels"], matrix=confusion["matrix"])]
    return [
        _heat(title=label, labels=["no", "yes"], matrix=matrix)
        for label, matrix in confusion.items()
    ]


def _heat(*, title: str, labels: list[str], matrix: list[list[int]]) -> dict[str, Any]:
    peak = max((v for row in matrix for v in row), default=0) or 1
    rows = []
    for label, row in zip(labels, matrix, strict=False):
        total = sum(row) or 1
        rows.append({
            "label": label,
            # Colour by the row share so rare labels are as readable as common ones.
            "cells": [{"value": v, "alpha": round(0.08 + 0.85 * v / total, 3),
                       "dark": v / total > 0.55} for v in row],
        })
    return {"title": title, "labels": labels, "rows": rows, "peak": peak}


@login_required
def model_detail(request: HttpRequest, pk: int) -> HttpResponse:
    model = model_get(request, pk)
    metrics = model.metrics or {}
    manifest = selectors.mlmodel_manifest(ml_model=model) if model.is_trained else {}
    thresholds = metrics.get("thresholds") or manifest.get("thresholds") or []
    label_names = model.label_names or manifest.get("label_names") or []
    per_label = metrics.get("per_label") or {}
    jobs = TrainingJob.objects.filter(ml_model=model).only(
        "id", "status", "attempt", "created_at", "finished_at", "progress_percentage"
    )
    return render(request, "classification/model_detail.html", {
        "settings_rows": job_settings(model_type=model.model_type, config=model.parameters),
        "model": model,
        "metrics": metrics,
        "metric_rows": metric_rows(metrics),
        "per_label": [
            {"label": name, **per_label.get(name, {}),
             "threshold": thresholds[i] if i < len(thresholds) else None}
            for i, name in enumerate(label_names)
        ],
        "show_thresholds": model.is_multilabel and bool(thresholds),
        "quality_warnings": quality_warnings(model_type=model.model_type, metrics=metrics),
        "inference_path": selectors.mlmodel_inference_path(ml_model=model),
        "baseline": metrics.get("baseline"),
        "calibration": calibration_panel(metrics=metrics, manifest=manifest,
                                         label_names=label_names),
        "confusion": confusion_tables(metrics.get("confusion")),
        "mistakes": metrics.get("confident_mistakes") or [],
        "jobs": jobs,
        "evaluate_form": FileUploadForm(),
        "evaluation": request.session.pop(f"evaluation-{model.pk}", None),
        "per_label_chart": {
            "labels": label_names,
            "f1": [per_label.get(n, {}).get("f1", 0) for n in label_names],
        },
        # The model may be in a project other than the current one: its own role decides.
        "may": policy.actions_on(user=request.user, obj=model),
    })


@login_required
def model_download(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    model = model_get(request, pk, policy.Action.DOWNLOAD)
    folder = selectors.mlmodel_artifact_dir(ml_model=model) if model.is_trained else None
    if folder is None:
        raise Http404("This model has no trained artifact to download.")
    name = slugify(model.name) or f"model-{model.pk}"
    response = StreamingHttpResponse(zip_directory_stream(folder, prefix=name),
                                     content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{name}.zip"'
    return response


@login_required
def model_export(request: HttpRequest, pk: int) -> HttpResponse:
    """The model as a folder that loads without MedLitBot (export.py); a refusal is said on
    the model page."""
    model = model_get(request, pk, policy.Action.DOWNLOAD)
    try:
        filename, stream = mlmodel_export_stream(ml_model=model)
    except ExportRefused as exc:
        messages.error(request, str(exc))
        return redirect("classification:model_detail", pk=model.pk)
    response = StreamingHttpResponse(stream, content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_required
def model_compare(request: HttpRequest) -> HttpResponse:
    """GET: the models' stored test metrics, and each metric with an interval on rows they
    were all scored on (views/compare.py); POST: evaluate them all on an uploaded file."""
    ids = [int(i) for i in (request.POST if request.method == "POST" else request.GET)
           .getlist("ids") if i.isdigit()][:8]
    # The models asked for may be in any of the person's projects; the choices are the
    # current project's.
    models = list(selectors.mlmodel_list(user=request.user).filter(pk__in=ids)
                  .select_related("dataset"))
    if ids and len(models) != len(set(ids)):
        raise Http404("One of those models does not exist.")
    choices = selectors.mlmodel_trained_list(user=request.user, project=request.project).only(
        "id", "name", "model_type"
    )
    keys = [("micro_f1", "Micro-F1"), ("macro_f1", "Macro-F1"), ("weighted_f1", "Weighted F1"),
            ("accuracy", "Accuracy"), ("subset_accuracy", "Subset accuracy"),
            ("hamming_loss", "Hamming loss"), ("roc_auc_macro", "ROC-AUC (macro)"),
            ("n", "Test examples")]
    # Scores measured on different rows are not ranked: the fewer rows may be the easier ones.
    different_rows = measured_on_different_rows(models)
    rows = [
        _compare_row(label, [(m.metrics or {}).get(key) for m in models],
                     lower_is_better=key == "hamming_loss", rank=key != "n" and not different_rows)
        for key, label in keys
        if any((m.metrics or {}).get(key) is not None for m in models)
    ]
    labels = sorted({name for m in models for name in (m.metrics or {}).get("per_label", {})})
    chart = {
        "models": [m.name for m in models],
        "headline": {
            label: [(m.metrics or {}).get(key) or 0 for m in models]
            for key, label in keys[:3]
        },
        "labels": labels,
        "per_label_f1": [
            [
                ((m.metrics or {}).get("per_label", {}).get(name) or {}).get("f1", 0)
                for name in labels
            ]
            for m in models
        ],
    }
    if request.method == "POST":
        return compare.compare_evaluate(request, models=models)
    combinable = [m for m in models if m.is_trained and m.model_type != "ensemble"]
    extra = {"may": policy.actions_on(user=request.user, obj=combinable[0])} if combinable else {}
    return render(request, "classification/model_compare.html", {
        **extra,  # the members' project decides whether they may be combined
        "models": models, "rows": rows, "chart": chart, "choices": choices, "selected": ids,
        # Scores are like for like when the test rows are the same, even across datasets (one
        # remade from reviews keeps its source's test rows); an ensemble needs one dataset.
        "mixed_tests": scored_on_different_test_rows(models),
        "different_rows": different_rows,
        "rows_measured": [test_rows_measured(m) for m in models],
        "mixed_datasets": len({m.dataset_id for m in models}) > 1,
        "combinable": combinable,
        **compare.comparison_context(request, models=models),
    })


@login_required
@require_POST
def ensemble_create(request: HttpRequest) -> HttpResponse:
    ids = [int(i) for i in request.POST.getlist("ids") if i.isdigit()]
    try:
        job = ensemble_create_service(owner=request.user, member_ids=ids,
                                      name=request.POST.get("name", "").strip()[:200])
    except ValueError as exc:
        messages.error(request, str(exc))
        query = "&".join(f"ids={i}" for i in ids)
        return redirect(f"{reverse('classification:model_compare')}?{query}")
    messages.success(request, "Ensemble queued: its members are scored on validation and its "
                     "weights tuned. This page updates as it runs.")
    return redirect("classification:job_detail", pk=job.pk)


def _compare_row(label: str, values: list[Any], *, lower_is_better: bool,
                 rank: bool) -> dict[str, Any]:
    numbers = [v for v in values if isinstance(v, int | float)]
    best = (min(numbers) if lower_is_better else max(numbers)) if rank and numbers else None
    return {"label": label, "cells": [
        {"value": v, "best": len(values) > 1 and v is not None and v == best} for v in values
    ]}


@login_required
@require_POST
def model_delete(request: HttpRequest, pk: int) -> HttpResponse:
    model = model_get(request, pk, policy.Action.DELETE)
    name = model.name
    try:
        services.mlmodel_delete(ml_model=model, actor=request.user)
    except ValueError as exc:  # still training or classifying: its folders are in use
        messages.error(request, str(exc))
        return redirect("classification:model_detail", pk=model.pk)
    messages.success(request, f"Deleted model “{name}”.")
    return redirect("classification:model_list")
