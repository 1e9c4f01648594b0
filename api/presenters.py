"""What the API says beyond a row's columns: a job's history window and phase words (shared
with the job page through classification.views.presenters) and a model's headline metrics."""

from __future__ import annotations

from typing import Any

from django.db.models.fields.json import KeyTransform

# One home for the history window and the phase words: the job page's JSON uses them too.
from classification.views.presenters import job_history_window, job_phase_display

__all__ = ["job_history_window", "job_phase_display", "model_headline_annotations",
           "model_headline_metrics"]


# The numbers a model's representation carries; the full dict is at /api/models/{id}/metrics/.
HEADLINE_METRICS = ("micro_f1", "macro_f1", "weighted_f1", "accuracy", "subset_accuracy",
                    "hamming_loss", "roc_auc_macro", "n")


def model_headline_annotations() -> dict[str, Any]:
    """Each headline number read inside the database, so a list never loads the metrics JSON
    (its per-label scores, confusion matrices and example texts)."""
    return {f"headline_{name}": KeyTransform(name, "metrics") for name in HEADLINE_METRICS}


def model_headline_metrics(ml_model: Any) -> dict[str, Any]:
    if hasattr(ml_model, f"headline_{HEADLINE_METRICS[0]}"):
        values = {name: getattr(ml_model, f"headline_{name}") for name in HEADLINE_METRICS}
    else:
        metrics = ml_model.metrics or {}
        values = {name: metrics.get(name) for name in HEADLINE_METRICS}
    return {name: value for name, value in values.items() if value is not None}
