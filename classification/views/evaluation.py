"""Evaluate on another file: upload, see the columns used (and change them), see the scores.

The upload is staged like a dataset upload (dataset_management.staging: private to whoever
uploaded it, purged after a day), so changing a column re-reads the same file without a second
upload.
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from classification import services
from classification.forms import FileUploadForm
from classification.mlmodels.overlap import overlap_warning
from classification.models import MLModel
from classification.views.models import model_get
from classification.views.presenters import metric_rows
from core.diskspace import DiskFull
from dataset_management.mapping import MAPPING_FIELDS
from dataset_management.readers import DatasetFileError
from dataset_management.staging import upload_discard, upload_open, upload_stage
from projects import policy

logger = logging.getLogger(__name__)

# The dataset preview's selects, less the split: evaluation scores the whole file.
COLUMN_FIELDS = {k: v for k, v in MAPPING_FIELDS.items() if k != "map_split"}
EVALUATE_ERRORS = (DatasetFileError, ValueError)


@login_required
@require_POST
def model_evaluate(request: HttpRequest, pk: int) -> HttpResponse:
    """A file upload stages it; a token with column choices re-reads the staged file. Either
    way the page shows the columns used, and the scores once a label column is known.

    Running the model on a file is classifying: the reviewer role in the model's project."""
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
        overrides = {key: request.POST[name] for name, key in COLUMN_FIELDS.items()
                     if request.POST.get(name)}
    if request.POST.get("action") == "done":
        upload_discard(owner_id=request.user.pk, token=token)
        return redirect("classification:model_detail", pk=model.pk)
    return _evaluate_page(request, model=model, token=token, overrides=overrides)


def _evaluate_page(request: HttpRequest, *, model: MLModel, token: str,
                   overrides: dict[str, Any], error: str = "") -> HttpResponse:
    staged = upload_open(owner_id=request.user.pk, token=token)
    if staged is None:
        messages.error(request, "That file has expired. Please upload it again.")
        return redirect("classification:model_detail", pk=model.pk)
    result = None
    with staged:
        path = staged.file.name
        try:
            columns = services.mlmodel_evaluation_columns(
                ml_model=model, path=path, filename=staged.name, overrides=overrides)
        except EVALUATE_ERRORS as exc:
            if overrides:  # the column choice is wrong: show what we detect, and why
                return _evaluate_page(request, model=model, token=token, overrides={},
                                      error=f"Those columns do not work: {exc}")
            upload_discard(owner_id=request.user.pk, token=token)
            messages.error(request, f"Could not evaluate on that file: {exc}")
            return redirect("classification:model_detail", pk=model.pk)
        problem = columns.problem(text_option="the “Abstract” choice",
                                  label_option="the “Label column” choice")
        if not problem and not error:
            try:
                result = services.mlmodel_evaluate_file(ml_model=model, path=path,
                                                        columns=columns)
            except EVALUATE_ERRORS as exc:
                error = f"Could not evaluate on that file: {exc}"
    return render(request, "classification/model_evaluate.html", {
        "model": model,
        "token": token,
        "columns": columns,
        "error": error,
        "problem": problem,
        "result": result,
        "rows": metric_rows(result) if result else [],
        "overlap_warning": overlap_warning((result or {}).get("training_overlap")),
        "unknown_labels": sorted((result or {}).get("unknown_labels", {}).items(),
                                 key=lambda kv: (-kv[1], kv[0])),
    }, status=200 if result or not error else 400)
