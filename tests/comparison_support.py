"""Helpers of the comparison tests: rows whose models are right on a known share of them."""

from __future__ import annotations

import numpy as np

from classification.mlmodels.comparison import comparison_figures
from classification.mlmodels.comparison_rows import ComparedRows

LABELS = ["a", "b", "c", "d"]


def rows_of(n: int, accuracies: list[float], *, seed: int = 0,
            multi_label: bool = False) -> ComparedRows:
    """Single-label rows whose models are right on exactly `accuracy` of them (wrong ones get
    the next class)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, len(LABELS), n)
    preds = []
    for accuracy in accuracies:
        pred = truth.copy()
        wrong = rng.permutation(n)[: n - round(accuracy * n)]
        pred[wrong] = (pred[wrong] + 1) % len(LABELS)
        preds.append(np.eye(len(LABELS), dtype=np.int64)[pred])
    return ComparedRows(truth=np.eye(len(LABELS), dtype=np.int64)[truth], preds=preds,
                        label_names=LABELS, multi_label=multi_label, basis=f"{n} rows")


def figures(rows: ComparedRows) -> dict:
    return comparison_figures(rows=rows, models=[{"id": i, "name": f"model {i}"}
                                                 for i in range(len(rows.preds))])
