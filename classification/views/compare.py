"""Compare's intervals: which rows the models are compared on, the figures of
mlmodels.comparison on them, and the upload that evaluates every model on one file.

The rows are the models' shared test split ("test") or a file they were all evaluated on
("evaluation:<file sha256 or evaluation ids>"). An upload starts one evaluation job per model
and comes back to Compare on those evaluations, which waits (static/js/model_compare.js reloads
it) until they have all finished.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse

from classification import services
from classification.forms import FileUploadForm
from classification.mlmodels.comparison import (
    COMPARE_ERRORS,
    EVALUATION,
    TEST,
    comparison_evaluation_jobs,
    mlmodel_comparison,
)
from classification.mlmodels.comparison_rows import comparison_evaluation_files
from classification.mlmodels.evaluation_selectors import evaluation_job_list
from classification.models import MLModel
from classification.views.presenters import comparison_display
from core.diskspace import DiskFull
from projects import policy


def compare_url(*, models: list[MLModel], on: str = TEST) -> str:
    query = "&".join(f"ids={m.pk}" for m in models)
    return f"{reverse('classification:model_compare')}?{query}&on={on}"


def comparison_context(request: HttpRequest, *, models: list[MLModel]) -> dict[str, Any]:
    """What the page shows about intervals: the rows chosen (`on`), the choices of rows, the
    evaluations still running, and the figures or why there are none."""
    if len(models) < 2:
        return {}
    on = (request.GET.get("on") or TEST).strip()
    jobs = evaluation_job_list(user=request.user).filter(ml_model__in=models)
    files = comparison_evaluation_files(models=models, jobs=list(jobs))
    choices = [(TEST, "Their own test split")] if len({m.dataset_id for m in models}) == 1 else []
    choices += [(EVALUATION + f["digest"], f"Evaluation file “{f['filename']}”") for f in files]
    if on not in {value for value, _ in choices}:
        choices.append((on, "Their own test split" if on == TEST
                        else "These evaluations" if on.startswith(EVALUATION) else on))
    context: dict[str, Any] = {
        "on": on, "on_choices": choices, "upload_form": FileUploadForm(),
        # Evaluating runs each model: the upload is drawn only where every one may be run.
        "may_evaluate": all(policy.can(user=request.user, action=policy.Action.CLASSIFY, obj=m)
                            for m in models),
        "pending": [], "comparison": None, "comparison_error": "",
    }
    try:
        if on.startswith(EVALUATION):
            chosen = comparison_evaluation_jobs(user=request.user, models=models,
                                                ref=on[len(EVALUATION):])
            context["evaluations"] = list(chosen.values())
            context["pending"] = [job for job in chosen.values() if job.is_active]
            ended = [job for job in chosen.values()
                     if not job.is_active and job.status != job.Status.COMPLETED]
            if ended:
                raise ValueError(f"The evaluation of “{ended[0].ml_model.name}” "
                                 f"{ended[0].get_status_display().lower()}: "
                                 f"{ended[0].reason or 'no reason was given'}")
        if not context["pending"]:
            figures = mlmodel_comparison(user=request.user, models=models, on=on)
            context["comparison"] = comparison_display(figures)
    except COMPARE_ERRORS as exc:
        context["comparison_error"] = str(exc)
    return context


def compare_evaluate(request: HttpRequest, *, models: list[MLModel]) -> HttpResponse:
    """Evaluate every model on the uploaded file, then Compare on those evaluations. Nothing is
    started unless every model may be evaluated and finds its columns in the file."""
    back = compare_url(models=models)
    if len(models) < 2:
        messages.error(request, "Choose at least 2 models to evaluate on one file.")
        return redirect(back)
    for model in models:  # a role that may not run one of them is refused before any starts
        policy.require(user=request.user, action=policy.Action.CLASSIFY, obj=model)
    form = FileUploadForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, "Choose a labelled file to evaluate these models on.")
        return redirect(back)
    upload = form.cleaned_data["file"]
    name = Path(upload.name or "evaluation").name
    with tempfile.TemporaryDirectory(prefix="medlitbot-compare-") as folder:
        source = Path(folder) / name
        with source.open("wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
        try:
            _columns_found(models=models, source=source, filename=name)
            jobs = [services.evaluation_job_create(owner=request.user, ml_model=model,
                                                   source=source, filename=name)
                    for model in models]
        except (*COMPARE_ERRORS, DiskFull) as exc:
            messages.error(request, f"Could not evaluate these models on “{name}”: "
                           f"{getattr(exc, 'message', None) or exc}")
            return redirect(back)
    messages.success(request, f"Evaluating {len(jobs)} models on “{name}”: the comparison "
                     "appears here when they have all finished.")
    return redirect(compare_url(models=models,
                                on=EVALUATION + ",".join(job.pk.hex for job in jobs)))


def _columns_found(*, models: list[MLModel], source: Path, filename: str) -> None:
    """ValueError unless every model finds a text and a label column in the file."""
    for model in models:
        if not model.is_trained:
            raise ValueError(f"“{model.name}” is not trained.")
        columns = services.mlmodel_evaluation_columns(ml_model=model, path=source,
                                                      filename=filename)
        problem = columns.problem(text_option="the evaluation page's “Abstract” choice",
                                  label_option="the evaluation page's “Label column” choice")
        if problem:
            raise ValueError(f"for “{model.name}”: {problem}")
