"""Per-class decision rules for single-label models, tuned on the validation split.

Argmax of the probabilities favours classes the model saw often. Rather than re-weighting the
loss (which distorts training and, measured by scripts/compare_recipes.py, made the largest
class all but vanish), each class gets an additive offset on its log-probability, chosen to
maximise validation macro-F1: the "tuned per-class decision rule" of the medical-abstract
classification literature. Offsets that do not clearly beat plain argmax are dropped, because
a small validation split rewards noise: on the demo data plain argmax usually stays.

Beside them, per label, a threshold for a recall target (recall_threshold): offered to whoever
must miss few articles (screening), not used unless prediction asks for threshold=recall.
"""

from __future__ import annotations

import math

import numpy as np

from .metrics import macro_f1, macro_f1_of_counts

OFFSET_GRID = np.round(np.linspace(-1.0, 1.0, 21), 4)
ROUNDS = 2
# Macro-F1 gain below which plain argmax is kept. Measured (scripts/compare_recipes.py): on a
# 196-row validation split, offsets worth +0.005 there cost 0.02 on test; only a gain of a few
# articles' worth is more likely signal than noise.
MIN_GAIN = 0.02


def single_label_choice(prob: np.ndarray, offsets: list[float] | None = None) -> np.ndarray:
    """The chosen class index per row: argmax of log-probability plus each class's offset."""
    if not len(prob):
        return np.zeros(0, dtype=np.int64)
    if not offsets or not any(offsets):
        return prob.argmax(axis=1)
    scores = np.log(np.clip(prob, 1e-12, None)) + np.asarray(offsets)[None, :]
    return scores.argmax(axis=1)


def _macro_f1(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int) -> float:
    """metrics.macro_f1 of class indices."""
    eye = np.eye(n_classes, dtype=np.int64)
    return macro_f1(eye[y_true], eye[y_pred])


def _grid_scores(y_true: np.ndarray, log_prob: np.ndarray, offsets: np.ndarray,
                 j: int) -> np.ndarray:
    """Macro-F1 with class j's offset set to each OFFSET_GRID value in turn and the others as
    `offsets` has them: the whole grid at once, as `(log_prob + trial).argmax(axis=1)` would
    choose (a tie goes to the lower class index). An ensemble's weights are tuned by this on
    every weighting, on up to 2,000 rows: one class's grid in a few array operations, where one
    argmax per grid value took ten times as long."""
    rows, n_classes = log_prob.shape
    others = log_prob + offsets
    others[:, j] = -np.inf
    other_arg = others.argmax(axis=1)
    other_max = others[np.arange(rows), other_arg]
    mine = log_prob[:, j][None, :] + OFFSET_GRID[:, None]  # grid values x rows
    chosen = np.where((mine > other_max) | ((mine == other_max) & (j < other_arg)), j,
                      other_arg)
    cells = np.arange(len(OFFSET_GRID))[:, None] * n_classes + chosen
    size = len(OFFSET_GRID) * n_classes
    predicted = np.bincount(cells.ravel(), minlength=size).reshape(-1, n_classes)
    hit = chosen == y_true[None, :]
    tp = np.bincount(cells[hit], minlength=size).reshape(-1, n_classes)
    return macro_f1_of_counts(tp=tp, predicted=predicted,
                              actual=np.bincount(y_true, minlength=n_classes)[None, :])


def _ascend(y_true: np.ndarray, log_prob: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Coordinate ascent on the offsets: (offsets, macro-F1 before, macro-F1 after)."""
    n_classes = log_prob.shape[1]
    offsets = np.zeros(n_classes)
    base = best = _macro_f1(y_true, log_prob.argmax(axis=1), n_classes)
    for _ in range(ROUNDS):
        for j in range(n_classes):
            # Only class j's offset moves along its grid, so every score is known up front.
            for value, score in zip(OFFSET_GRID, _grid_scores(y_true, log_prob, offsets, j),
                                    strict=True):
                # Ties go to the smaller offset: the closer to plain argmax, the less overfit.
                if score > best + 1e-9 or (
                    abs(score - best) <= 1e-9 and abs(value) < abs(offsets[j])
                ):
                    best = float(score)
                    offsets = offsets.copy()
                    offsets[j] = value
    return offsets, base, best


def tune_class_offsets(y_true: np.ndarray, prob: np.ndarray) -> list[float]:
    """Offsets maximising validation macro-F1; zeros unless the gain is real.

    Real means: large (MIN_GAIN) on the whole validation split, and repeated out of sample:
    offsets tuned on either half of it gain at least MIN_GAIN / 2 on the other half. Pure
    noise passes the first test on 200 rows about half the time, and both about 6 times in
    100 (measured on Dirichlet noise over three classes).
    """
    n_classes = prob.shape[1] if prob.ndim == 2 else 0
    zeros = [0.0] * n_classes
    if len(y_true) < 20 or n_classes < 2 or len(np.unique(y_true)) < 2:
        return zeros
    log_prob = np.log(np.clip(prob, 1e-12, None))
    offsets, base, best = _ascend(y_true, log_prob)
    if best - base < MIN_GAIN:
        return zeros
    halves = (np.arange(len(y_true)) % 2 == 0, np.arange(len(y_true)) % 2 == 1)
    for fit, check in (halves, halves[::-1]):
        half_offsets, _, _ = _ascend(y_true[fit], log_prob[fit])
        plain = _macro_f1(y_true[check], log_prob[check].argmax(axis=1), n_classes)
        tuned = _macro_f1(y_true[check], (log_prob[check] + half_offsets).argmax(axis=1),
                          n_classes)
        if tuned < plain + MIN_GAIN / 2:
            return zeros
    return [float(v) for v in offsets]


def recall_threshold(p: np.ndarray, y: np.ndarray, target: float) -> dict[str, float | int | None]:
    """One label's highest threshold whose recall on (p, y) reaches target, with its recall,
    precision and positives; threshold None when the label has no positive row to aim at.

    The highest such threshold flags the fewest articles: screening reads fewer for the same
    recall. It sits exactly on a positive's probability, since "p >= t" includes that row.
    """
    y = np.asarray(y).astype(bool)
    positives = int(y.sum())
    if not positives:
        return {"threshold": None, "recall": None, "precision": None, "positives": 0}
    needed = max(1, math.ceil(target * positives - 1e-9))
    threshold = float(np.sort(p[y])[::-1][needed - 1])
    flagged = p >= threshold
    return {"threshold": threshold,
            "recall": float((flagged & y).sum() / positives),
            "precision": float((flagged & y).sum() / max(1, flagged.sum())),
            "positives": positives}


def recall_thresholds(truth: np.ndarray, prob: np.ndarray,
                      target: float) -> list[dict[str, float | int | None]]:
    """recall_threshold per label: truth and prob are (n, L), whatever the task shape."""
    return [recall_threshold(prob[:, j], truth[:, j], target) for j in range(prob.shape[1])]
