"""Evaluate on another file: upload, see the columns used (and change them), then follow the
evaluation on the inference worker and read its scores.

The upload is staged like a dataset upload (dataset_management.staging: private to whoever
uploaded it, purged after a day). Only its first rows are read here, to decide the columns: when
they are found, the evaluation job is made at once and the person is sent to its page, which
polls its progress (static/js/evaluation.js) and shows the scores when it is done. When they are
not, the columns page asks for them, re-reading the same staged file without a second upload.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from classification import services
from classification.forms import FileUploadForm
from classification.mlmodels import evaluation_selectors as selectors
from classification.mlmodels.overlap import overlap_warning
from classification.models import EvaluationJob, MLModel
from classification.views.models import model_get
from classification.views.presenters import metric_rows
from core.diskspace import DiskFull
from core.paging import page_of
from dataset_management.mapping import MAPPING_FIELDS
from dataset_management.readers import DatasetFileError
from dataset_management.staging import upload_discard, upload_open, upload_stage
from projects import policy

logger = logging.getLogger(__name__)

# The dataset preview's selects, less the split: evaluation scores the whole file.
COLUMN_FIELDS = {k: v for k, v in MAPPING_FIELDS.items() if k != "map_split"}
EVALUATE_ERRORS = (DatasetFileError, ValueError)
PAST_SHOWN = 20


def _column_choices(request: HttpRequest) -> dict[str, Any]:
    return {key: request.POST[name] for name, key in COLUMN_FIELDS.items()
            if request.POST.get(name)}


@login_required
@require_http_methods(["GET", "POST"])
def model_evaluate(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: the model's past evaluations, newest first and paged, and the upload form. POST: a file
    upload stages it; a token with column choices re-reads the staged file. Either way, once the
    columns are known the evaluation starts on the worker and its page follows it.

    Running the model on a file is classifying: the reviewer role in the model's project."""
    if request.method == "GET":
        model = model_get(request, pk)
        page = page_of(selectors.evaluation_job_list(user=request.user, ml_model=model)
                       .order_by("-created_at", "-pk"), request.GET.get("page"))
        return render(request, "classification/model_evaluations.html", {
            "model": model, "evaluate_form": FileUploadForm(),
            "past": page.object_list, "page": page,
            "may": policy.actions_on(user=request.user, obj=model)})
    model = model_get(request, pk, policy.Action.CLASSIFY)
    if not model.is_trained:
        messages.error(request, "Train the model before evaluating it.")
        return redirect("classification:model_detail", pk=model.pk)
    if request.FILES or not request.POST.get("token"):
        form = FileUploadForm(request.POST, request.FILES)
        if not form.is_valid():
            messages.error(request, "Choose a file to evaluate on.")
            return redirect("classification:model_detail", pk=model.pk)
        try:
            token = upload_stage(owner_id=request.user.pk, uploaded_file=form.cleaned_data["file"])
        except DiskFull as exc:
            messages.error(request, exc.message)
            return redirect("classification:model_detail", pk=model.pk)
        overrides: dict[str, Any] = {}
    else:
        token = request.POST.get("token", "")
        overrides = _column_choices(request)
    if request.POST.get("action") == "done":
        upload_discard(owner_id=request.user.pk, token=token)
        return redirect("classification:model_detail", pk=model.pk)
    return _columns_or_start(request, model=model, token=token, overrides=overrides)


def _columns_or_start(request: HttpRequest, *, model: MLModel, token: str,
                      overrides: dict[str, Any], error: str = "") -> HttpResponse:
    """Read the staged file's first rows: start the job when its columns are known, else show
    them with the reason and the choices."""
    staged = upload_open(owner_id=request.user.pk, token=token)
    if staged is None:
        messages.error(request, "That file has expired. Please upload it again.")
        return redirect("classification:model_detail", pk=model.pk)
    with staged:
        path = Path(staged.file.name)
        try:
            columns = services.mlmodel_evaluation_columns(
                ml_model=model, path=path, filename=staged.name, overrides=overrides)
        except EVALUATE_ERRORS as exc:
            if overrides:  # the column choice is wrong: show what we detect, and why
                return _columns_or_start(request, model=model, token=token, overrides={},
                                         error=f"Those columns do not work: {exc}")
            upload_discard(owner_id=request.user.pk, token=token)
            messages.error(request, f"Could not evaluate on that file: {exc}")
            return redirect("classification:model_detail", pk=model.pk)
        problem = columns.problem(text_option="the “Abstract” choice",
                                  label_option="the “Label column” choice")
        if not problem and not error:
            try:
                job = services.evaluation_job_create(owner=request.user, ml_model=model,
                                                     source=path, filename=staged.name,
                                                     overrides=overrides)
            except (services.EvaluationError, DiskFull) as exc:
                error = getattr(exc, "message", None) or str(exc)
            else:
                upload_discard(owner_id=request.user.pk, token=token)
                return redirect("classification:evaluation_detail", job_id=job.pk.hex)
    return render(request, "classification/model_evaluate.html", {
        "model": model, "token": token, "columns": columns, "error": error,
        "problem": problem,
    }, status=400 if error else 200)


def evaluation_get(request: HttpRequest, job_id: str,
                   action: str = policy.Action.VIEW) -> EvaluationJob:
    return selectors.evaluation_job_get(user=request.user, job_id=job_id, action=action)


@login_required
def evaluation_detail(request: HttpRequest, job_id: str) -> HttpResponse:
    """The evaluation's progress while it runs (polled by evaluation.js, which reloads the
    page when it ends), then its scores; the columns it used, to evaluate again with others;
    and the model's other evaluations, newest first."""
    job = evaluation_get(request, job_id)
    result = job.result or {}
    past = selectors.evaluation_job_list(user=request.user, ml_model=job.ml_model_id)
    return render(request, "classification/evaluation_detail.html", {
        "job": job, "payload": selectors.evaluation_job_payload(job=job),
        "model": job.ml_model, "preview": job.preview or {},
        "result": result or None, "rows": metric_rows(result) if result else [],
        "overlap_warning": overlap_warning(result.get("training_overlap")),
        "unknown_labels": sorted((result.get("unknown_labels") or {}).items(),
                                 key=lambda kv: (-kv[1], kv[0])),
        "past": past[:PAST_SHOWN],
        "may": policy.actions_on(user=request.user, obj=job),
    })


@require_GET
def evaluation_progress(request: HttpRequest, job_id: str) -> JsonResponse:
    if not request.user.is_authenticated:
        return JsonResponse({"detail": "Log in first."}, status=401)
    pk = selectors.evaluation_job_uuid(job_id)
    job = selectors.evaluation_job_list(user=request.user).filter(pk=pk).first() if pk else None
    if job is None:
        return JsonResponse({"detail": "Not found."}, status=404)
    payload = selectors.evaluation_job_payload(job=job)
    payload.pop("result")  # the page reloads for the scores; polling stays small
    return JsonResponse(payload)


@login_required
@require_POST
def evaluation_cancel(request: HttpRequest, job_id: str) -> HttpResponse:
    job = evaluation_get(request, job_id, policy.Action.CANCEL)
    if job.is_active:
        job = services.evaluation_job_cancel(job=job, actor=request.user)
        messages.info(request, "Cancelled." if job.status == EvaluationJob.Status.CANCELLED
                      else "Cancelling: it stops after the rows it is scoring now.")
    return redirect("classification:evaluation_detail", job_id=job.pk.hex)


@login_required
@require_POST
def evaluation_rerun(request: HttpRequest, job_id: str) -> HttpResponse:
    """Evaluate the same kept file again, with the columns chosen on the page."""
    job = evaluation_get(request, job_id, policy.Action.CLASSIFY)
    try:
        again = services.evaluation_job_rerun(job=job, actor=request.user,
                                              overrides=_column_choices(request))
    except (services.EvaluationError, DiskFull) as exc:
        messages.error(request, getattr(exc, "message", None) or str(exc))
        return redirect("classification:evaluation_detail", job_id=job.pk.hex)
    return redirect("classification:evaluation_detail", job_id=again.pk.hex)
