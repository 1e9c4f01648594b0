"""Self-training's pure parts (no Django, no torch): which unlabelled texts a fitted model is
sure enough of to learn from, and the id lists its settings take (jobs/self_training.py runs
the rounds)."""

from __future__ import annotations

import uuid

import numpy as np


def dataset_ids_check(value: list[str]) -> list[str]:
    """Dataset ids as whole numbers, each once; ValueError with the person's message."""
    if any(not item.strip().isdigit() for item in value):
        raise ValueError("Enter dataset ids (whole numbers).")
    return list(dict.fromkeys(str(int(item)) for item in value))


def batch_ids_check(value: list[str]) -> list[str]:
    """Batch ids as the hex of their UUIDs, each once; ValueError with the person's message."""
    try:
        return list(dict.fromkeys(uuid.UUID(item.strip()).hex for item in value))
    except ValueError:
        raise ValueError("Enter batch ids (as the batch's page and the API show them).") from None


def pseudo_labels(prob: np.ndarray, *, label_names: list[str], multi_label: bool,
                  threshold: float) -> list[list[str] | None]:
    """Per row of calibrated probabilities, its labels when every decision is sure, else None.

    Multi-label: each label's p is at least `threshold` (a label) or at most 1 - `threshold`
    (not one), and at least one label is given (a row with none teaches the head nothing and
    fit drops it). Single-label: the top class's p is at least `threshold`. The bar is the
    probability, not the model's tuned thresholds: those trade errors for F1, while a
    pseudo-label must be right."""
    out: list[list[str] | None] = []
    for row in np.asarray(prob, dtype=np.float64):
        if multi_label:
            sure = bool(np.all((row >= threshold) | (row <= 1.0 - threshold)))
            chosen = [label_names[i] for i in np.flatnonzero(row >= threshold)]
            out.append(chosen if sure and chosen else None)
        else:
            top = int(row.argmax()) if row.size else 0
            out.append([label_names[top]] if row.size and row[top] >= threshold else None)
    return out
