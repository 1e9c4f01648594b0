from __future__ import annotations

import math
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from classification import selectors, services
from classification.batches.selectors import batch_job_list
from classification.forms import BatchForm, ClassifyForm
from classification.mlmodels.explanations import ExplainBusy, mlmodel_explain
from classification.mlmodels.thresholds import mlmodel_recall_target, mlmodel_threshold_check
from classification.models import MLModel
from classification.views.batches import batch_payload
from projects import policy

# Highlight intensity: five steps of |weight| relative to the explanation's strongest word;
# words under MIN_SHARE of it stay plain, or an explanation by gradients would colour them all.
LEVELS = 5
MIN_SHARE = 0.05
METHOD_TEXT = {
    "linear": "Exact: each word or word pair, and each piece of a word (character n-grams, "
              "credited to the word it lies in), adds its coefficient × its TF-IDF value to "
              "the score; with the model's intercept they add up to the score.",
    "integrated_gradients": "Integrated Gradients: each word's share of the change in score "
                            "between this text and the same text with every word blanked out.",
}


def _trained_model_get(request: HttpRequest, raw: str, action: str) -> MLModel:
    """A trained model in any of the person's projects: 404 outside them (or for no such
    trained model), 403 when their role there may not do `action`."""
    return policy.object_get(selectors.mlmodel_trained_list(user=request.user),
                             user=request.user, action=action, pk=raw)


def _chosen(request: HttpRequest, models: list[MLModel], raw: str) -> MLModel | None:
    """The model asked for (a link from a model page may name one of another project: it is
    added to the choice), else the current project's first."""
    by_id = {str(m.pk): m for m in models}
    if raw and raw not in by_id:
        model = _trained_model_get(request, raw, policy.Action.VIEW)
        models.append(model)
        return model
    return by_id.get(raw) or (models[0] if models else None)


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


def _classified(model: MLModel, form: ClassifyForm) -> tuple[dict[str, Any] | None, str | None]:
    """(the result for the page, error): the labels under the thresholds the form chose."""
    threshold = form.threshold_chosen()
    try:
        # A forged or stale choice of recall for a model without it: the same words as the API.
        mlmodel_threshold_check(ml_model=model, threshold=threshold)
        prediction = services.mlmodel_predict(ml_model=model, texts=[form.text()],
                                              threshold=threshold)[0]
    except ValueError as exc:
        return None, str(exc)
    return {
        "labels": prediction["labels"],
        "threshold": threshold,
        "bars": sorted(
            ({"label": k, "p": v, "pct": round(100 * v, 1), "on": k in prediction["labels"]}
             for k, v in prediction["probabilities"].items()),
            key=lambda b: -b["p"],
        ),
    }, None


@login_required
def classify(request: HttpRequest) -> HttpResponse:
    """The current project's trained models; classifying needs the reviewer role in the chosen
    model's project (the button is drawn only then, and a forged POST is refused 403)."""
    models = list(selectors.mlmodel_trained_list(user=request.user, project=request.project))
    model = _chosen(request, models, request.POST.get("model") or request.GET.get("model") or "")
    may = policy.actions_on(user=request.user, obj=model) if model is not None else None
    form = ClassifyForm(request.POST or None)
    result = None
    error = None
    explanation = None
    explain_error = None
    if request.method == "POST" and model is not None:
        policy.require(user=request.user, action=policy.Action.CLASSIFY, obj=model)
        if request.POST.get("explain"):
            policy.require(user=request.user, action=policy.Action.EXPLAIN, obj=model)
    if request.method == "POST" and form.is_valid() and model is not None:
        result, error = _classified(model, form)
        # The Explain buttons submit this form again with the label: this works without
        # JavaScript; static/js/explain.js asks classify_explain for the card instead.
        if result is not None and request.POST.get("explain"):
            explanation, explain_error, _ = _explain(model, form.text(), request.POST["explain"])
    return render(request, "classification/classify.html", {
        **({"may": may} if may is not None else {}),  # the chosen model's project decides
        "models": models,
        "model": model,
        "form": form,
        "result": result,
        "error": error,
        "explanation": explanation,
        "explain_error": explain_error,
        # The threshold choice is drawn only for a model that has recall thresholds.
        "recall_target": mlmodel_recall_target(ml_model=model) if model is not None else None,
        "batch_form": BatchForm(),
        "batches": [batch_payload(b) for b in
                    batch_job_list(user=request.user, project=request.project)[:10]],
    })


@login_required
@require_POST
def classify_explain(request: HttpRequest) -> HttpResponse:
    """The explanation card for one label of the Classify form's text (HTML, for explain.js)."""
    raw = request.POST.get("model", "")
    if not raw.isdigit():
        raise Http404("No such trained model.")
    model = _trained_model_get(request, raw, policy.Action.EXPLAIN)
    form = ClassifyForm(request.POST)
    if not form.is_valid():
        explanation, error, code = None, " ".join(form.non_field_errors()) or "Invalid text.", 400
    else:
        explanation, error, code = _explain(model, form.text(), request.POST.get("label", ""))
    return render(request, "classification/includes/explanation.html",
                  {"explanation": explanation, "explain_error": error}, status=code)
