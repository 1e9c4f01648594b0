"""The per-class offset ascent scores a class's whole grid of offsets in one pass. An
ensemble's weights are tuned by it on every weighting, on up to 2,000 out-of-fold rows, so it
had to be faster; it must still choose exactly the offsets that trying each grid value with its
own argmax chose, ties included (a tie goes to the lower class, and to the smaller offset)."""

from __future__ import annotations

import numpy as np

from classification.engine.decisions import (
    OFFSET_GRID,
    ROUNDS,
    _ascend,
    _macro_f1,
    tune_class_offsets,
)


def one_value_at_a_time(y_true: np.ndarray, log_prob: np.ndarray,
                        ) -> tuple[np.ndarray, float, float]:
    """The ascent as it was written first: one argmax per grid value."""
    n_classes = log_prob.shape[1]
    offsets = np.zeros(n_classes)
    base = best = _macro_f1(y_true, log_prob.argmax(axis=1), n_classes)
    for _ in range(ROUNDS):
        for j in range(n_classes):
            for value in OFFSET_GRID:
                trial = offsets.copy()
                trial[j] = value
                score = _macro_f1(y_true, (log_prob + trial).argmax(axis=1), n_classes)
                if score > best + 1e-9 or (abs(score - best) <= 1e-9
                                           and abs(value) < abs(offsets[j])):
                    best, offsets = score, trial
    return offsets, base, best


def test_the_grid_at_once_picks_the_offsets_one_value_at_a_time_picks() -> None:
    rng = np.random.default_rng(0)
    moved = 0
    for case in range(200):
        rows, classes = int(rng.integers(20, 300)), int(rng.integers(2, 7))
        y_true = rng.integers(0, classes, rows)
        prob = rng.dirichlet(np.full(classes, rng.uniform(0.3, 3.0)), rows)
        if case % 3 == 0:  # coarse probabilities: many rows tie between classes
            prob = np.round(prob, 1) + 1e-12
        log_prob = np.log(np.clip(prob, 1e-12, None))
        expected, got = one_value_at_a_time(y_true, log_prob), _ascend(y_true, log_prob)
        assert np.array_equal(got[0], expected[0]), case
        assert got[1] == expected[1]
        assert abs(got[2] - expected[2]) < 1e-12
        moved += bool(np.any(got[0]))
    assert moved > 50  # most cases moved some offset: the comparison was not of zeros


def test_offsets_still_fix_a_class_the_model_under_calls() -> None:
    rng = np.random.default_rng(1)
    rows = 600
    y_true = rng.integers(0, 3, rows)
    prob = np.full((rows, 3), 0.2)
    prob[np.arange(rows), y_true] = 0.6
    prob[y_true == 2] = [0.45, 0.2, 0.35]  # class 2 is always scored below class 0
    prob /= prob.sum(axis=1, keepdims=True)

    offsets = tune_class_offsets(y_true, prob)

    chosen = (np.log(prob) + offsets).argmax(axis=1)
    assert offsets[2] - offsets[0] > np.log(0.45 / 0.35)
    assert (chosen == y_true).mean() == 1.0
