"""Batch classification pages: upload a file, watch the job on the inference worker, cancel it,
download the results as a safe CSV, RIS or JSON Lines, delete it. Every read and action goes
through projects.policy: a batch outside the person's projects is a 404, an action their role
there may not do a 403 naming the role."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from classification.batches import exports, selectors, services
from classification.forms import BatchForm
from classification.history.selectors import status_changes_for
from classification.mlmodels.thresholds import mlmodel_recall_target
from classification.models import BatchJob, MLModel
from classification.views.reliability import calibration_statement
from dataset_management.export import export_response
from projects import policy


def batch_get(request: HttpRequest, batch_id: str, action: str = policy.Action.VIEW) -> BatchJob:
    return selectors.batch_job_get(user=request.user, batch_id=batch_id, action=action)


@login_required
@require_POST
def batch_create(request: HttpRequest) -> HttpResponse:
    # The service asks the policy too (every door does); here it also makes an unknown or
    # unseen model a 404 rather than a message.
    model = policy.object_get(MLModel.objects.filter(status=MLModel.Status.TRAINED),
                              user=request.user, action=policy.Action.CLASSIFY,
                              pk=_int(request.POST.get("model")))
    back = f"{reverse('classification:classify')}?model={model.pk}"
    form = BatchForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, "Choose a file of articles to classify.")
        return redirect(back)
    try:
        # A broker outage raises QueueUnavailable here: the middleware answers 503, and the
        # service has already failed the row and removed the file.
        batch = services.batch_job_create(owner=request.user, ml_model=model,
                                          uploaded_file=form.cleaned_data["file"],
                                          top_terms=form.cleaned_data["top_terms"],
                                          threshold=form.threshold_chosen())
    except services.BatchError as exc:
        messages.error(request, str(exc))
        return redirect(back)
    return redirect("classification:batch_detail", batch_id=batch.pk.hex)


@login_required
def batch_detail(request: HttpRequest, batch_id: str) -> HttpResponse:
    batch = batch_get(request, batch_id)
    return render(request, "classification/batch_detail.html",
                  {"batch": batch_payload(batch), "batch_id": batch.pk.hex,
                   # What was measured about its probabilities (from the metrics its
                   # training stored) and which thresholds chose its labels.
                   "calibration_statement": calibration_statement(
                       metrics=batch.ml_model.metrics or {}),
                   "recall_target": mlmodel_recall_target(ml_model=batch.ml_model)
                   if batch.threshold == "recall" else None,
                   "active_statuses": BatchJob.ACTIVE_STATUSES,
                   "label_prefix": settings.EXPORT_LABEL_PREFIX,
                   "status_history": status_changes_for(batch=batch),
                   # The batch may be in a project other than the current one.
                   "may": policy.actions_on(user=request.user, obj=batch)})


@require_GET
def batch_progress(request: HttpRequest, batch_id: str) -> JsonResponse:
    if not request.user.is_authenticated:
        return JsonResponse({"detail": "Log in first."}, status=401)
    batch = selectors.batch_job_list(user=request.user).filter(
        pk=selectors.batch_job_uuid(batch_id)).first()
    if batch is None:
        return JsonResponse({"detail": "Not found."}, status=404)
    return JsonResponse(batch_payload(batch))


@login_required
@require_POST
def batch_cancel(request: HttpRequest, batch_id: str) -> HttpResponse:
    batch = batch_get(request, batch_id, policy.Action.CANCEL)
    if batch.is_active:
        batch = services.batch_job_cancel(batch=batch, actor=request.user)
        messages.info(request, "Cancelled." if batch.status == BatchJob.Status.CANCELLED
                      else "Cancelling: it stops after the articles it is classifying now.")
    return redirect("classification:batch_detail", batch_id=batch.pk.hex)


def batch_payload(batch: BatchJob) -> dict[str, Any]:
    """The shape jobs.js reads for training jobs too: status, progress, eta, phase."""
    return {
        "id": batch.pk.hex, "status": batch.status,
        "status_display": batch.get_status_display(),
        **selectors.batch_job_progress(batch=batch),
        "processed": batch.processed, "total": batch.total, "skipped": batch.skipped,
        "reason": batch.reason, "filename": batch.filename,
        "model_id": batch.ml_model_id, "model_name": batch.ml_model.name,
        "created_at": batch.created_at.timestamp(), "is_active": batch.is_active,
        "is_problem": batch.is_problem,
        "cancel_requested": batch.cancel_requested, "threshold": batch.threshold,
        "done": batch.status == BatchJob.Status.COMPLETED,
    }


@login_required
def batch_download(request: HttpRequest, batch_id: str) -> HttpResponseBase:
    """?format=csv (the default), ris or jsonl."""
    batch = batch_get(request, batch_id, policy.Action.DOWNLOAD)
    fmt = request.GET.get("format", "csv")
    if fmt not in exports.EXPORT_FORMATS:
        raise Http404("No such format.")
    try:
        export = exports.batch_job_export(batch=batch, fmt=fmt)
    except exports.ExportUnavailable as exc:
        raise Http404(str(exc)) from None
    if export is None:
        raise Http404("The results are not ready.")
    return export_response(export)


@login_required
@require_POST
def batch_delete(request: HttpRequest, batch_id: str) -> HttpResponse:
    batch = batch_get(request, batch_id, policy.Action.DELETE)
    try:
        services.batch_job_delete(batch=batch, actor=request.user)
    except services.BatchError as exc:
        messages.error(request, str(exc))
        return redirect("classification:batch_detail", batch_id=batch.pk.hex)
    messages.success(request, f"Deleted the batch “{batch.filename}” and its results.")
    return redirect(f"{reverse('classification:classify')}?model={batch.ml_model_id}")


def _int(value: str | None) -> int:
    return int(value) if value and value.isdigit() else 0
