"""Batch classification pages: upload a file, watch the background job, download a safe CSV."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from classification.forms import FileUploadForm
from classification.models import MLModel
from web import batches
from web.batch_store import ACTIVE, LABELS


def owned_batch(request: HttpRequest, batch_id: str) -> dict[str, Any]:
    batch = batches.batch_get(owner_id=request.user.pk, batch_id=batch_id)
    if batch is None:
        raise Http404("No such batch.")
    return batch


@login_required
@require_POST
def batch_create(request: HttpRequest) -> HttpResponse:
    model = get_object_or_404(MLModel, pk=_int(request.POST.get("model")), owner=request.user,
                              status=MLModel.Status.TRAINED)
    back = f"{reverse('classification:classify')}?model={model.pk}"
    form = FileUploadForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, "Choose a file of articles to classify.")
        return redirect(back)
    try:
        batch = batches.batch_create(owner_id=request.user.pk, ml_model=model,
                                     uploaded_file=form.cleaned_data["file"])
    except batches.BatchError as exc:
        messages.error(request, str(exc))
        return redirect(back)
    return redirect("classification:batch_detail", batch_id=batch["id"])


@login_required
def batch_detail(request: HttpRequest, batch_id: str) -> HttpResponse:
    batch = owned_batch(request, batch_id)
    return render(request, "classification/batch_detail.html",
                  {"batch": batch_payload(batch), "batch_id": batch_id})


@require_GET
def batch_progress(request: HttpRequest, batch_id: str) -> JsonResponse:
    if not request.user.is_authenticated:
        return JsonResponse({"detail": "Log in first."}, status=401)
    batch = batches.batch_get(owner_id=request.user.pk, batch_id=batch_id)
    if batch is None:
        return JsonResponse({"detail": "Not found."}, status=404)
    return JsonResponse(batch_payload(batch))


def batch_payload(batch: dict[str, Any]) -> dict[str, Any]:
    """The shape jobs.js reads for training jobs too: status, progress, eta, phase."""
    total, done = batch.get("total"), batch.get("processed") or 0
    progress = 100.0 if batch["status"] == "completed" else (100.0 * done / total if total else 0)
    started = batch.get("started_at")
    eta = None
    if batch["status"] == "running" and started and done and total:
        eta = (time.time() - started) / done * (total - done)
    counted = f"{done} of {total} articles" if total is not None else "counting articles"
    if batch.get("skipped"):
        counted += f", {batch['skipped']} without text skipped"
    return {
        "id": batch["id"], "status": batch["status"],
        "status_display": LABELS.get(batch["status"], batch["status"]),
        "phase_display": counted, "progress": round(progress, 1), "eta_seconds": eta,
        "processed": done, "total": total, "skipped": batch.get("skipped", 0),
        "reason": batch.get("reason", ""), "filename": batch.get("filename", ""),
        "model_id": batch.get("model_id"), "model_name": batch.get("model_name", ""),
        "created_at": batch.get("created_at"), "is_active": batch["status"] in ACTIVE,
        "done": batch["status"] == "completed",
    }


@login_required
def batch_download(request: HttpRequest, batch_id: str) -> FileResponse:
    batch = owned_batch(request, batch_id)
    path = batches.batch_result_path(owner_id=request.user.pk, batch_id=batch_id)
    if path is None:
        raise Http404("The results are not ready.")
    name = Path(batch.get("filename") or "articles").stem[:80] or "articles"
    return FileResponse(path.open("rb"), as_attachment=True,
                        filename=f"{name}-predictions.csv", content_type="text/csv")


def _int(value: str | None) -> int:
    return int(value) if value and value.isdigit() else 0
