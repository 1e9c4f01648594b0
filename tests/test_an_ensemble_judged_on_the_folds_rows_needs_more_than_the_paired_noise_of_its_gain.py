"""On the rows of a search's folds (thousands, not validation's hundreds), an ensemble must beat
the winner by more than the paired noise of its gain: two standard errors of the difference
between the two sides' macro-F1 over bootstrap resamples of the rows. Rows both sides decide
alike add nothing to that noise, so a real gain on many rows is seen, and noise members still
never win."""

from __future__ import annotations

import math

import numpy as np

from classification.engine.ensemble_score import (
    ENSEMBLE_MARGIN,
    FOLD_ROWS,
    ensemble_judge,
    paired_error,
)
from classification.engine.metrics import macro_f1
from classification.engine.search_scoring import NOISE_Z


def informative(rng: np.random.Generator, truth: np.ndarray, strength: float) -> np.ndarray:
    classes = truth.shape[1]
    return (1 - strength) * rng.dirichlet(np.ones(classes), len(truth)) + strength * (
        0.6 * truth + 0.4 / classes)


def test_the_paired_error_is_the_spread_of_the_difference_over_resampled_rows() -> None:
    rng = np.random.default_rng(4)
    truth = np.eye(4, dtype=np.int64)[rng.integers(0, 4, 300)]
    first = np.eye(4, dtype=np.int64)[np.where(rng.random(300) < 0.7, truth.argmax(1),
                                               rng.integers(0, 4, 300))]
    second = np.eye(4, dtype=np.int64)[np.where(rng.random(300) < 0.6, truth.argmax(1),
                                                rng.integers(0, 4, 300))]

    counts = np.random.default_rng(0).multinomial(300, np.full(300, 1 / 300), size=400)
    diffs = []
    for drawn in counts:  # each resample as the rows it drew, one by one
        rows = np.repeat(np.arange(300), drawn)
        diffs.append(macro_f1(truth[rows], first[rows]) - macro_f1(truth[rows], second[rows]))

    assert paired_error(truth, first, second) == np.std(diffs, ddof=1)
    assert paired_error(truth, first, first) == 0.0


def test_a_real_gain_unseen_on_validations_rows_is_seen_on_the_folds_rows() -> None:
    rng = np.random.default_rng(2)
    rows, classes = 2000, 5
    truth = np.eye(classes, dtype=np.int64)[rng.integers(0, classes, rows)]
    # Two kinds that share most of what they know and differ in the rest, as TF-IDF and
    # sentence vectors do: their average is right more often than either.
    shared = informative(rng, truth, 0.3)
    members = [0.6 * shared + 0.4 * informative(rng, truth, 0.3) for _ in range(2)]

    on_folds = ensemble_judge(probs=members, alone=members[0], truth=truth, multi_label=False,
                              over=FOLD_ROWS)
    on_validation = ensemble_judge(probs=[m[:200] for m in members], alone=members[0][:200],
                                   truth=truth[:200], multi_label=False)

    assert on_folds is not None
    assert on_validation is not None
    assert on_folds.basis == f"out of fold on {rows} rows of the search's folds (5 folds)"
    assert on_folds.wins
    # Paired, the noise is below one score's on the same rows: rows decided alike add none.
    one_score = math.sqrt(on_folds.alone * (1 - on_folds.alone) / rows)
    assert ENSEMBLE_MARGIN < on_folds.margin < ENSEMBLE_MARGIN + NOISE_Z * one_score
    assert on_validation.basis == "out of fold on 200 validation rows (5 folds)"
    assert not on_validation.wins  # 200 rows cannot tell this gain from noise
    assert on_validation.margin > 2 * on_folds.margin


def test_on_the_folds_rows_noise_members_still_never_win() -> None:
    rng = np.random.default_rng(6)
    rows, classes = 2000, 5
    truth = np.eye(classes, dtype=np.int64)[rng.integers(0, classes, rows)]
    winner = informative(rng, truth, 0.5)
    noise = [rng.dirichlet(np.ones(classes), rows) for _ in range(2)]

    judged = ensemble_judge(probs=[winner, *noise], alone=winner, truth=truth,
                            multi_label=False, over=FOLD_ROWS)

    assert judged is not None
    assert not judged.wins
