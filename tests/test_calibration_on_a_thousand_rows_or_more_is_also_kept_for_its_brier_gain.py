"""On BRIER_ROUTE_ROWS out-of-fold rows or more, a calibration map is also kept when it lowers
the Brier score beyond that gain's noise without raising the ECE: ECE's bins make its own gain
too noisy to clear its margin where a model's probabilities are plainly off. A model biased
towards one class, with 1,800 rows to choose on, is recalibrated by that route and its ECE on
fresh rows falls; the same figures from a validation-sized split keep none."""

from __future__ import annotations

import numpy as np

from classification.engine.calibration import (
    calibration_events,
    expected_calibration_error,
    fit_calibration,
)
from classification.engine.calibration_select import BRIER_ROUTE_ROWS, Z_MARGIN, choose


def biased(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(reported probabilities, one-hot truth) of three classes, the first's log-odds +0.5."""
    logit = rng.normal(0, 1.2, (n, 3))
    q = np.exp(logit) / np.exp(logit).sum(axis=1, keepdims=True)
    chosen = (q.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    reported = np.exp(logit + np.array([0.5, 0.0, 0.0]))
    return reported / reported.sum(axis=1, keepdims=True), np.eye(3, dtype=np.int64)[chosen]


def ece(prob: np.ndarray, truth: np.ndarray) -> float:
    return float(expected_calibration_error(*calibration_events(prob, truth, False)))


def test_a_biased_model_is_recalibrated_by_its_brier_gain_and_its_fresh_ece_falls() -> None:
    by_brier_alone, before, after = [], [], []
    for seed in range(5):
        rng = np.random.default_rng(seed)
        prob, truth = biased(rng, 1800)
        fresh, fresh_truth = biased(rng, 20000)
        calibration = fit_calibration(prob=prob, truth=truth, multi_label=False)
        scores = calibration.selection["candidates"]
        assert calibration.chosen != "none", scores
        kept, plain = scores[calibration.chosen], scores["none"]
        assert kept["rows"] == 1800 >= BRIER_ROUTE_ROWS
        before.append(ece(fresh, fresh_truth))
        after.append(ece(calibration.apply(fresh), fresh_truth))
        assert after[-1] <= before[-1] + 0.005  # never worse beyond the noise of fresh rows
        if plain["ece"] - kept["ece"] <= Z_MARGIN * kept["gain_sd"]:
            # Kept for its Brier gain: past its noise, with the ECE lower too.
            assert plain["brier"] - kept["brier"] > Z_MARGIN * kept["brier_gain_se"]
            assert kept["ece"] < plain["ece"]
            by_brier_alone.append(scores)
    assert by_brier_alone  # the ECE margin alone would have kept none there
    assert np.mean(after) < np.mean(before)

    for scores in by_brier_alone:
        small = {method: {**figures, "rows": 286} for method, figures in scores.items()}
        assert choose(small) == "none"
