"""Plain-words wording for the pages: what a person should understand and do next."""

from __future__ import annotations

from typing import Any

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
