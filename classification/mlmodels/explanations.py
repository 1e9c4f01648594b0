"""Explaining one prediction, on request: never for every row of a batch.

The classifier is the one predictions use, cached per process (prediction._classifier). A
TF-IDF explanation costs milliseconds; a transformer's costs about a second of every core, so
in one process at most EXPLAIN_CONCURRENCY of those run at once and the others wait up to
EXPLAIN_WAIT_SECONDS, then are told to retry: a burst of clicks must not starve predictions.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from django.conf import settings

from classification import ml_models
from classification.engine.explain import LINEAR, ExplanationUnavailable, explanation_method
from classification.mlmodels.prediction import _classifier
from classification.mlmodels.searches import search_winner
from classification.models import MLModel

# MAX_TEXT_CHARS: by default the Classify form's title (2,000) and abstract (100,000) joined.
EXPLAIN_MAX_CHARS = settings.MAX_TEXT_CHARS
EXPLAIN_MAX_LABELS = 50
EXPLAIN_TOP_K = 10
EXPLAIN_CONCURRENCY = 1
EXPLAIN_WAIT_SECONDS = 10.0
_gradient_slots = threading.BoundedSemaphore(EXPLAIN_CONCURRENCY)

# The kinds whose classifiers engine/explain.py knows how to take apart.
EXPLAINABLE_KINDS = frozenset({"baseline", "transformer", "embedding"})
TOP_TERMS_K = 5

__all__ = [
    "EXPLAIN_MAX_CHARS",
    "ExplainBusy",
    "ExplanationUnavailable",
    "explainable",
    "mlmodel_explain",
    "mlmodel_top_terms",
]


def explainable(ml_model: MLModel) -> bool:
    # A search's model is its winner's kind (a TF-IDF winner explains exactly).
    model_type = search_winner(metrics=ml_model.metrics).get("model_type", ml_model.model_type)
    spec = ml_models.REGISTRY.get(model_type)
    return spec is not None and spec.kind in EXPLAINABLE_KINDS and spec.explainable


class ExplainBusy(Exception):
    """Other explanations kept this process's cores busy for EXPLAIN_WAIT_SECONDS."""

    message = "Other explanations are being computed; try again in a few seconds."
    retry_after_seconds = 5

    def __str__(self) -> str:
        return self.message


def mlmodel_explain(
    *,
    ml_model: MLModel,
    text: str,
    labels: Sequence[str] | None = None,
    top_k: int = EXPLAIN_TOP_K,
) -> dict[str, Any]:
    """Why ml_model scored text as it did: ml_models.explain's answer plus `model_id`.

    labels=None explains the predicted labels. ValueError for an untrained model, an empty or
    too long text, an unknown label, or a model kind that has no explanation
    (ExplanationUnavailable); ExplainBusy when the process is busy explaining.
    """
    if len(text) > EXPLAIN_MAX_CHARS:
        raise ValueError(f"The text has {len(text):,} characters; explanations take up to "
                         f"{EXPLAIN_MAX_CHARS:,}.")
    if labels is not None and len(labels) > EXPLAIN_MAX_LABELS:
        raise ValueError(f"At most {EXPLAIN_MAX_LABELS} labels per explanation.")
    classifier = _classifier(ml_model)
    if explanation_method(classifier) == LINEAR:
        result = ml_models.explain(classifier, text, labels=labels, top_k=top_k)
    else:
        if not _gradient_slots.acquire(timeout=EXPLAIN_WAIT_SECONDS):
            raise ExplainBusy()
        try:
            result = ml_models.explain(classifier, text, labels=labels, top_k=top_k)
        finally:
            _gradient_slots.release()
    return {"model_id": ml_model.pk, **result}


def mlmodel_top_terms(*, ml_model: MLModel, text: str, labels: Sequence[str],
                      top_k: int = TOP_TERMS_K) -> dict[str, list[str]]:
    """The words that pushed each of `labels` up most, strongest first: a batch's top_terms.

    Runs in the inference worker, one article at a time, without the web's concurrency gate:
    the batch is already the only thing that worker's process does.
    """
    if not labels:
        return {}
    result = ml_models.explain(_classifier(ml_model), text, labels=list(labels), top_k=top_k)
    return {row["label"]: [term["term"] for term in row["positive"]]
            for row in result["explanations"]}
