"""Batch classification pages: upload a file, watch the background job, download a safe CSV."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from classification import services
from classification.forms import FileUploadForm
from classification.models import MLModel


def _batch_model():
    from classification.models import PredictionBatch

    return PredictionBatch


def owned_batch(request: HttpRequest, pk: int):
    return get_object_or_404(_batch_model().objects.select_related("ml_model"), pk=pk,
                             ml_model__owner=request.user)


@login_required
@require_POST
def batch_create(request: HttpRequest) -> HttpResponse:
    model = get_object_or_404(MLModel, pk=request.POST.get("model") or 0, owner=request.user,
                              status=MLModel.Status.TRAINED)
    form = FileUploadForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, "Choose a file of articles to classify.")
        return redirect(f"{_classify_url()}?model={model.pk}")
    uploaded = form.cleaned_data["file"]
    if uploaded.size > settings.MAX_UPLOAD_SIZE:
        messages.error(request, f"The file is {uploaded.size / 1048576:.1f} MB; the limit is "
                                f"{settings.MAX_UPLOAD_SIZE / 1048576:.0f} MB.")
        return redirect(f"{_classify_url()}?model={model.pk}")
    try:
        batch = services.prediction_batch_create(owner=request.user, ml_model=model,
                                                 uploaded_file=uploaded)
    except ValueError as exc:
        messages.error(request, f"Could not read that file: {exc}")
        return redirect(f"{_classify_url()}?model={model.pk}")
    return redirect("classification:batch_detail", pk=batch.pk)


def _classify_url() -> str:
    from django.urls import reverse

    return reverse("classification:classify")


@login_required
def batch_detail(request: HttpRequest, pk: int) -> HttpResponse:
    return render(request, "classification/batch_detail.html", {"batch": owned_batch(request, pk)})


@login_required
def batch_progress(request: HttpRequest, pk: int) -> JsonResponse:
    b = owned_batch(request, pk)
    return JsonResponse({
        "status": b.status,
        "status_display": b.get_status_display(),
        "progress": round(getattr(b, "progress_percentage", 0.0) or 0.0, 1),
        "processed": getattr(b, "processed_rows", None),
        "total": getattr(b, "total_rows", None),
        "reason": getattr(b, "reason", ""),
        "done": b.status == "completed",
    })


@login_required
def batch_download(request: HttpRequest, pk: int) -> FileResponse:
    batch = owned_batch(request, pk)
    path = services.prediction_batch_result_path(batch=batch)
    if not path or not Path(path).is_file():
        raise Http404("The results are not ready.")
    name = Path(getattr(batch, "original_filename", "") or "articles").stem
    return FileResponse(open(path, "rb"), as_attachment=True,
                        filename=f"{name}-predictions.csv", content_type="text/csv")
