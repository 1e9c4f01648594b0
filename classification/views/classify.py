from __future__ import annotations

import math
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from classification import services
from classification.batches.selectors import batch_job_list
from classification.forms import BatchForm, ClassifyForm
from classification.jobs.explanations import ExplainBusy, mlmodel_explain
from classification.models import MLModel
from classification.views.batches import batch_payload

# Highlight intensity: five steps of |weight| relative to the explanation's strongest word;
# words under MIN_SHARE of it stay plain, or an explanation by gradients would colour them all.
LEVELS = 5
MIN_SHARE = 0.05
METHOD_TEXT = {
    "linear": "Exact: each word or word pair adds its coefficient × its TF-IDF value to the "
              "score; with the model's intercept they add up to the score.",
    "integrated_gradients": "Integrated Gradients: each word's share of the change in score "
                            "between this text and the same text with every word blanked out.",
}


def _trained_models(request: HttpRequest):
    return MLModel.objects.filter(owner=request.user, status=MLModel.Status.TRAINED).only(
        "id", "name", "model_type", "label_names", "is_multilabel", "artifact_path",
        "artifact_digest", "status",
    )


def _chosen(models, raw: str | None) -> MLModel | None:
    by_id = {str(m.pk): m for m in models}
    return by_id.get(raw or "") or (next(iter(by_id.values())) if by_id else None)


def explanation_payload(text: str, result: dict[str, Any]) -> dict[str, Any]:
    """One label's explanation as the page draws it: the text cut into plain and highlighted
    segments (sign and level 1-5 for the CSS classes), and the top terms."""
    row = result["explanations"][0]
    read_to = result["truncated_at"] or len(text)
    strongest = max((abs(w) for _, _, w in row["spans"]), default=0.0)
    segments: list[dict[str, Any]] = []
    position = 0
    for start, end, weight in sorted(row["spans"]):
        if strongest == 0.0 or abs(weight) < MIN_SHARE * strongest or start < position:
            continue
        if start > position:
            segments.append({"text": text[position:start]})
        segments.append({"text": text[start:end], "sign": "pos" if weight > 0 else "neg",
                         "level": max(1, min(LEVELS, math.ceil(LEVELS * abs(weight) / strongest))),
                         "weight": weight})
        position = end
    segments.append({"text": text[position:read_to]})
    return {
        **row,
        "pct": round(100 * row["probability"], 1),
        "segments": [s for s in segments if s["text"]],
        "unread": text[read_to:] if result["truncated_at"] else "",
        "method": result["method"],
        "method_text": METHOD_TEXT.get(result["method"], ""),
        "score_kind": result["score_kind"],
    }


def _explain(model: MLModel, text: str, label: str) -> tuple[dict | None, str | None, int]:
    """(explanation for the page, error, HTTP status)."""
    if label not in (model.label_names or []):
        return None, f"This model has no label {label!r}.", 400
    try:
        result = mlmodel_explain(ml_model=model, text=text, labels=[label])
    except ExplainBusy as exc:
        return None, str(exc), 503
    except ValueError as exc:
        return None, str(exc), 400
    return explanation_payload(text, result), None, 200


@login_required
def classify(request: HttpRequest) -> HttpResponse:
    models = list(_trained_models(request))
    model = _chosen(models, request.POST.get("model") or request.GET.get("model"))
    form = ClassifyForm(request.POST or None)
    result = None
    error = None
    explanation = None
    explain_error = None
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
            # The Explain buttons submit this form again with the label: this works without
            # JavaScript; static/js/explain.js asks classify_explain for the card instead.
            if request.POST.get("explain"):
                explanation, explain_error, _ = _explain(model, form.text(),
                                                         request.POST["explain"])
    return render(request, "classification/classify.html", {
        "models": models,
        "model": model,
        "form": form,
        "result": result,
        "error": error,
        "explanation": explanation,
        "explain_error": explain_error,
        "batch_form": BatchForm(),
        "batches": [batch_payload(b) for b in batch_job_list(owner=request.user)[:10]],
    })


@login_required
@require_POST
def classify_explain(request: HttpRequest) -> HttpResponse:
    """The explanation card for one label of the Classify form's text (HTML, for explain.js)."""
    raw = request.POST.get("model", "")
    model = _trained_models(request).filter(pk=int(raw)).first() if raw.isdigit() else None
    if model is None:
        raise Http404("No such trained model of yours.")
    form = ClassifyForm(request.POST)
    if not form.is_valid():
        explanation, error, code = None, " ".join(form.non_field_errors()) or "Invalid text.", 400
    else:
        explanation, error, code = _explain(model, form.text(), request.POST.get("label", ""))
    return render(request, "classification/includes/explanation.html",
                  {"explanation": explanation, "explain_error": error}, status=code)
