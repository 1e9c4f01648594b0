"""What the API says about a job beyond its columns: the window of its metrics history a poller
has not seen yet, and the words for its phase.

The API builds its answers from here and from api/serializers.py, never from the web views, so a
change to a page's JSON cannot change the API's representation (or the other way round).
"""

from __future__ import annotations

from typing import Any

from django.db.models.fields.json import KeyTransform

from classification.models import TrainingJob


def job_phase_display(phase: str) -> str:
    try:
        return TrainingJob.Phase(phase).label
    except ValueError:
        return phase.replace("_", " ").capitalize()


def _point_key(point: dict[str, Any]) -> str:
    return f"{point.get('kind', '')}:{point.get('step', '')}"


def job_history_start(history: list[dict[str, Any]], *, since: int, last: str | None) -> int:
    """Where the client's copy of the history ends.

    `since` alone is an index, but the worker keeps only the newest points, so once the cap is
    reached the indexes shift; `last` ("kind:step" of the client's newest point) finds the
    client's place again. 0 means "send everything": the client then redraws from scratch.
    """
    since = min(max(since, 0), len(history))
    if not last or since == 0:
        return since
    if _point_key(history[since - 1]) == last:
        return since
    for index in range(len(history) - 1, -1, -1):
        if _point_key(history[index]) == last:
            return index + 1
    return 0


def job_history_window(history: list[dict[str, Any]] | None, *, since: int = 0,
                       last: str | None = None) -> dict[str, Any]:
    """The keys `?expand=history` adds to a job: the same three the job page's JSON has."""
    history = history or []
    start = job_history_start(history, since=since, last=last)
    return {
        "history": history[start:],
        "history_length": len(history),
        "history_reset": bool(since) and start == 0 and bool(history),
    }


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
