"""A search's ensemble is kept only when it beats the winner out of fold on validation.

Its weights and thresholds are tuned on the validation rows; scored on them too (the rule
before issue 39), it beat the winner by noise. ensemble_score cross-fits both sides on the
same folds, so noise members no longer win, and a genuinely complementary pair still does.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from classification.engine.decisions import single_label_choice, tune_class_offsets
from classification.engine.ensemble import tune_weights
from classification.engine.ensemble_score import ENSEMBLE_MARGIN, ensemble_judge, label_folds
from classification.engine.metrics import apply_thresholds, macro_f1, tune_thresholds
from classification.engine.types import TrainingStopped


def in_sample(prob: np.ndarray, truth: np.ndarray, multi_label: bool) -> float:
    """Macro-F1 with the decision rules tuned on the rows that score it (the old rule)."""
    if multi_label:
        return macro_f1(truth, apply_thresholds(prob, tune_thresholds(truth, prob)))
    offsets = tune_class_offsets(truth.argmax(axis=1), prob)
    return macro_f1(truth, np.eye(prob.shape[1], dtype=np.int64)[single_label_choice(prob,
                                                                                     offsets)])


def test_members_of_pure_noise_win_in_sample_but_not_out_of_fold() -> None:
    rng = np.random.default_rng(3)
    rows, classes = 100, 4
    truth = np.eye(classes, dtype=np.int64)[rng.integers(0, classes, rows)]
    winner = 0.5 * rng.dirichlet(np.ones(classes), rows) + 0.5 * (0.6 * truth + 0.4 / classes)
    noise = [rng.dirichlet(np.ones(classes), rows) for _ in range(2)]
    probs = [winner, *noise]

    judged = ensemble_judge(probs=probs, alone=winner, truth=truth, multi_label=False)
    assert judged is not None
    assert (judged.rows, judged.folds) == (rows, 5)

    weights = tune_weights(probs, truth, multi_label=False)
    assert weights[1:].sum() > 0  # the noise earned a share of the weight
    together = np.tensordot(weights, np.stack(probs), axes=1)
    old_gain = in_sample(together, truth, False) - in_sample(winner, truth, False)
    # The old rule (in sample, one standard error) would have shipped the ensemble.
    p = judged.alone
    assert old_gain > ENSEMBLE_MARGIN + math.sqrt(p * (1 - p) / rows)
    assert not judged.wins
    assert judged.ensemble < judged.alone  # out of fold the noise only costs
    assert judged.basis == "out of fold on 100 validation rows (5 folds)"


def test_a_complementary_pair_still_beats_the_winner_out_of_fold() -> None:
    rng = np.random.default_rng(0)
    rows, labels = 200, 6
    truth = (rng.random((rows, labels)) < 0.3).astype(np.int64)
    knows = np.zeros((2, labels), dtype=bool)
    knows[0, :3], knows[1, 3:] = True, True  # each member is right on its own half
    members = [np.where(k, np.clip(0.75 * truth + 0.25 * rng.random((rows, labels)), 0, 1),
                        rng.random((rows, labels))) for k in knows]

    judged = ensemble_judge(probs=members, alone=members[0], truth=truth, multi_label=True)
    assert judged is not None
    assert judged.wins
    assert judged.ensemble > judged.alone + 0.05  # by far more than the noise


def test_the_folds_hold_every_label_in_about_equal_shares() -> None:
    rng = np.random.default_rng(1)
    truth = (rng.random((103, 4)) < [0.5, 0.2, 0.1, 0.05]).astype(np.int64)
    fold = label_folds(truth)
    assert sorted(np.bincount(fold)) == [20, 20, 21, 21, 21]
    for j in range(truth.shape[1]):
        per_fold = np.bincount(fold[truth[:, j] == 1], minlength=5)
        assert per_fold.max() - per_fold.min() <= 2


def test_too_few_validation_rows_are_not_judged() -> None:
    truth = np.eye(2, dtype=np.int64)[np.arange(10) % 2]
    prob = np.full((10, 2), 0.5)
    assert ensemble_judge(probs=[prob, prob], alone=prob, truth=truth, multi_label=False) is None


def test_the_cross_fit_stops_between_folds_when_another_would_not_fit() -> None:
    rng = np.random.default_rng(2)
    truth = (rng.random((60, 3)) < 0.4).astype(np.int64)
    probs = [rng.random((60, 3)) for _ in range(2)]
    asked: list[float] = []

    def fits(seconds: float) -> bool:  # room for one fold only
        asked.append(seconds)
        return len(asked) == 1

    with pytest.raises(TrainingStopped):
        ensemble_judge(probs=probs, alone=probs[0], truth=truth, multi_label=True, fits=fits)
    assert asked[0] == 0.0
    assert asked[1] > 0.0  # the first fold's own time, as the estimate of the next
