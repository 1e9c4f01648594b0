"""Plain-words wording for the pages: what a person should understand and do next."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from classification.engine.registry import REGISTRY
from classification.engine.schema import ALIASES, SETTINGS
from classification.models import TrainingJob

STATUS_HINTS = {
    "stalled": "The job stopped reporting progress, usually because the worker process died or "
    "the machine slept. Resume continues from the last checkpoint.",
    "failed": "Training stopped with an error. Fix the cause below, then resume or start again.",
    "cancelled": "You cancelled this job. Resume continues from the last checkpoint.",
    "queued": "Waiting for the background worker to pick this job up. If it stays queued, "
    "check that the worker is running (start_m1.sh starts it).",
}


def job_reason_plain(*, status: str, reason: str) -> str:
    hint = STATUS_HINTS.get(status, "")
    if status == "queued" or not reason:
        return hint
    first_line = reason.strip().splitlines()[0] if reason.strip() else ""
    return f"{hint} Reason: {first_line}" if hint else first_line


def metric_rows(metrics: dict[str, Any]) -> list[tuple[str, Any]]:
    """The headline numbers in a fixed, readable order."""
    names = [
        ("micro_f1", "Micro-F1"), ("macro_f1", "Macro-F1"), ("accuracy", "Accuracy"),
        ("subset_accuracy", "Subset accuracy"), ("hamming_loss", "Hamming loss"),
        ("weighted_f1", "Weighted F1"), ("n", "Test examples"),
    ]
    return [(label, metrics[key]) for key, label in names if metrics.get(key) is not None]


# --- The job page: what applies to this model type, and how long the job took -------------------

# Shown nowhere: the label space is the dataset's, listed on its own page; an ensemble's member
# folders are server paths, and its page lists the members by name.
HIDDEN_SETTINGS = frozenset({"label_names", "member_paths"})


def model_kind(model_type: str) -> str:
    """The registry's kind ("transformer", "embedding", "baseline"); unknown types count as
    transformers, so nothing is hidden about a type this version does not know."""
    spec = REGISTRY.get(model_type)
    return spec.kind if spec else "transformer"


def is_single_pass(model_type: str) -> bool:
    """Fitted in one pass (TF-IDF, embeddings + logreg): no epochs, steps or training loss."""
    return model_kind(model_type) != "transformer"


def job_settings(*, model_type: str, config: dict[str, Any]) -> list[tuple[str, Any]]:
    """The job's settings that this model type actually uses, in the config's order."""
    kind = model_kind(model_type)

    def shown(key: str) -> bool:
        spec = SETTINGS.get(ALIASES.get(key, key))
        if spec is not None:
            return spec.applies_to(kind) and key not in HIDDEN_SETTINGS
        # TF-IDF has no knobs a preset picks; other unknown keys are shown, not hidden.
        return not (key == "preset" and kind == "baseline")

    return [(key, value) for key, value in (config or {}).items() if shown(key)]


def format_duration(seconds: float | None) -> str:
    """"8 s", "4 min 05 s", "2 h 03 min"; "–" when unknown. static/js/charts.js agrees."""
    if seconds is None:
        return "–"
    whole = int(max(0.0, seconds) + 0.5)  # halves round up, as Math.round does in the page
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def job_durations(job: Any, *, now: datetime | None = None) -> list[dict[str, Any]]:
    """How long the job waited, ran and took in all, from its timestamps.

    Each row has `key`, `label`, `seconds` (None: not known or not begun), `counting` (still
    growing: the page adds the time since it was drawn) and `text`. A resume re-queues the same
    row and its claim overwrites `started_at`, so for a later attempt "ran" is that attempt's
    run, the wait before it is known only while it waits (a queued row's `updated_at` is when
    it entered the queue), and the total counts every attempt.
    """
    now = now or timezone.now()
    status = job.status
    queued = status == "queued"
    running = status == "running"
    ended = not (queued or running)
    first = (job.attempt or 1) <= 1
    # A resumed job that has not started again (or was cancelled while waiting) keeps the last
    # attempt's started_at; its phase is still "queued".
    began = job.started_at if job.started_at and (first or job.phase != "queued") else None
    end = job.finished_at or (job.updated_at if ended else None)

    def between(start: datetime | None, stop: datetime | None) -> float | None:
        if start is None or stop is None:
            return None
        return max(0.0, (stop - start).total_seconds())

    if queued:
        waited = between(job.created_at if first else job.updated_at, now)
    elif first:
        waited = between(job.created_at, began or end)
    else:
        waited = None
    ran = between(began, now if running else end)
    total = between(job.created_at, end if ended else now)
    attempt = f"attempt {job.attempt}" if not first else ""
    rows = [
        {"key": "queued", "label": f"Waited in queue{' · ' + attempt if attempt else ''}",
         "seconds": waited, "counting": queued,
         "text": format_duration(waited) if waited is not None else "–"},
        {"key": "ran", "label": f"Ran{' · ' + attempt if attempt else ''}",
         "seconds": ran, "counting": running,
         "text": format_duration(ran) if ran is not None else
         ("did not start" if ended else "not started")},
        {"key": "total", "label": "Total" + (" · all attempts" if attempt else ""),
         "seconds": total, "counting": not ended, "text": format_duration(total)},
    ]
    return rows


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
    """The part of a job's metrics history a poller has not seen yet, for the job page's JSON
    and the API's `?expand=history` alike."""
    history = history or []
    start = job_history_start(history, since=since, last=last)
    return {
        "history": history[start:],
        "history_length": len(history),
        "history_reset": bool(since) and start == 0 and bool(history),
    }
