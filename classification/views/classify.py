from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from classification import services
from classification.batches.selectors import batch_job_list
from classification.forms import ClassifyForm, FileUploadForm
from classification.models import MLModel
from classification.views.batches import batch_payload


def _trained_models(request: HttpRequest):
    return MLModel.objects.filter(owner=request.user, status=MLModel.Status.TRAINED).only(
        "id", "name", "model_type", "label_names", "is_multilabel", "artifact_path", "status"
    )


def _chosen(models, raw: str | None) -> MLModel | None:
    by_id = {str(m.pk): m for m in models}
    return by_id.get(raw or "") or (next(iter(by_id.values())) if by_id else None)


@login_required
def classify(request: HttpRequest) -> HttpResponse:
    models = list(_trained_models(request))
    model = _chosen(models, request.POST.get("model") or request.GET.get("model"))
    form = ClassifyForm(request.POST or None)
    result = None
    error = None
    if request.method == "POST" and form.is_valid() and model is not None:
        try:
            prediction = services.mlmodel_predict(ml_model=model, texts=[form.text()])[0]
        except ValueError as exc:
            error = str(exc)
        else:
            result = {
                "labels": prediction["labels"],
                "bars": sorted(
                    ({"label": k, "p": v, "pct": round(100 * v, 1), "on": k in prediction["labels"]}
                     for k, v in prediction["probabilities"].items()),
                    key=lambda b: -b["p"],
                ),
            }
    return render(request, "classification/classify.html", {
        "models": models,
        "model": model,
        "form": form,
        "result": result,
        "error": error,
        "batch_form": FileUploadForm(),
        "batches": [batch_payload(b) for b in batch_job_list(owner=request.user)[:10]],
    })
