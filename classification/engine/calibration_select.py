"""Which calibration a model keeps: the one with the lowest expected calibration error (ECE)
out of fold on the validation split, and none unless a method beats it beyond sampling noise.

Fitting a map and scoring it on the same rows flatters it (isotonic always wins there), so each
candidate (none, temperature, Platt, isotonic) is cross-fitted: fitted on four fifths of the
validation rows, applied to the fifth left out, five times, and the five held-out parts pooled
into one set of probabilities no map has seen. The candidate with the lowest ECE on that set is
refitted on all of validation and kept when:

- it lowers the ECE below none's by more than Z_MARGIN standard deviations of that gain, the
  deviation measured by a paired bootstrap over the validation rows (a small split needs a
  larger gain than a big one, so calibration is not chosen on noise); and
- it does not raise the out-of-fold Brier score above none's: ECE alone can be lowered by
  blurring every probability towards the label's base rate, which the Brier score punishes.

With at least BRIER_ROUTE_ROWS rows (the out-of-fold rows of a cross-fitted model, not a
300-row validation split), a candidate is also kept when it lowers the out-of-fold Brier score
by more than Z_MARGIN standard errors of that paired gain without raising the ECE. ECE's bins
make its gain noisy where Brier's is not: on the 5-class corpus, two calibrated SVMs whose Platt
map cut the Brier score by 4.8 and 3.4 standard errors fell short of the ECE margin (1.4 and 0.2
deviations) and kept none, at held-out ECE 0.080 and 0.048 where Platt gave 0.044 and 0.028
(issue 39, docs/figures/search_out_of_fold.md).

Otherwise the probabilities stay as the model gives them ("none"). Every candidate's figures,
the number of rows and the chosen map's out-of-fold reliability points are kept, so the pages
state what was measured. No Django here: the training child imports this module.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .calibration import (
    CV_FOLDS,
    ECE_BINS,
    ISOTONIC,
    NONE,
    PLATT,
    SELECT,
    TEMPERATURE,
    Calibration,
    brier_score,
    calibration_events,
    cross_folds,
    expected_calibration_error,
    fit_calibration,
    reliability_curve,
)

CANDIDATES = (NONE, TEMPERATURE, PLATT, ISOTONIC)
# Below this many validation rows a fifth holds ten or fewer: nothing is chosen on that.
MIN_ROWS = 50
BOOTSTRAP_DRAWS = 200
# How many bootstrap standard deviations the ECE gain over none must exceed. Measured by
# scripts/benchmark_calibration_margin.py on synthetic probabilities with known truth
# (calibrated, over- and under-confident, biased, 3 or 4 labels, single- and multi-label,
# 100/286/1000 validation rows, 20 seeds each, ECE then measured on 5,000-20,000 fresh rows):
# at 0 or 1, up to 7 of 20 seeds' choices were worse on fresh rows than none by more than
# 0.005 (by up to 0.097); at 2, 3 of the 720 runs were (by 0.009 to 0.024, all single-label
# with 1,000 rows, where the validation sample itself was over-confident by chance), every
# calibrated case kept none in 20 of 20 seeds at 100 and 286 rows, and a 1.5x over-confident
# model was still recalibrated in 3 to 20 of 20 seeds (15 to 20 from 286 rows up); 2.5 and 3
# still had 2 such runs each, and left that model uncalibrated in every seed at 100 rows
# single-label.
Z_MARGIN = 2.0
# The Brier route's fewest rows. scripts/benchmark_calibration_margin.py, with the route and
# without it (--brier-route-rows 0 and 10**9): from 1,000 rows up it kept every correction the
# ECE route kept and more (mean ECE gain on fresh rows equal or higher in every case); at 286
# rows it made a biased single-label model worse in 2 seeds of 20.
BRIER_ROUTE_ROWS = 1000


def _out_of_fold(prob: np.ndarray, truth: np.ndarray, multi_label: bool,
                 method: str) -> np.ndarray:
    """Every row's probabilities through the map fitted on the folds that leave it out."""
    if method == NONE:
        return prob
    fold = cross_folds(prob.max(axis=1))
    out = np.empty_like(prob)
    for k in range(CV_FOLDS):
        held = fold == k
        fitted = fit_calibration(prob=prob[~held], truth=truth[~held], multi_label=multi_label,
                                 method=method, checked=False)
        out[held] = fitted.apply(prob[held])
    return out


def _row_gaps(prob: np.ndarray, truth: np.ndarray, multi_label: bool) -> np.ndarray:
    """(rows, bins): per row, the sum of (correct - confidence) over its events in each bin,
    so that a resample's ECE is |weights @ gaps| summed over bins over its event count."""
    confidence, correct = calibration_events(prob, truth, multi_label)
    per_row = len(confidence) // len(prob)
    index = np.minimum((confidence * ECE_BINS).astype(np.int64), ECE_BINS - 1)
    gaps = np.zeros((len(prob), ECE_BINS))
    np.add.at(gaps, (np.repeat(np.arange(len(prob)), per_row), index), correct - confidence)
    return gaps


def _bootstrap_ece(gaps: np.ndarray, weights: np.ndarray, events_per_row: int) -> np.ndarray:
    return np.abs(weights @ gaps).sum(axis=1) / (weights.sum(axis=1) * events_per_row)


def _scores(prob: np.ndarray, truth: np.ndarray, multi_label: bool,
            candidates: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
    """Per candidate: out-of-fold ECE and Brier, and the bootstrap deviation of its ECE gain
    over none (paired: the same resampled rows for both)."""
    rng = np.random.default_rng(0)
    n = len(prob)
    weights = np.stack([np.bincount(rng.integers(0, n, n), minlength=n)
                        for _ in range(BOOTSTRAP_DRAWS)]).astype(np.float64)
    per_row = truth.shape[1] if multi_label else 1
    plain = _bootstrap_ece(_row_gaps(prob, truth, multi_label), weights, per_row)
    plain_brier = _row_brier(prob, truth, multi_label)
    out = {}
    for method, held_out in candidates.items():
        resampled = _bootstrap_ece(_row_gaps(held_out, truth, multi_label), weights, per_row)
        brier_gain = plain_brier - _row_brier(held_out, truth, multi_label)
        out[method] = {
            "ece": float(expected_calibration_error(
                *calibration_events(held_out, truth, multi_label)) or 0.0),
            "brier": float(brier_score(held_out, truth, multi_label) or 0.0),
            "gain_sd": float(np.std(plain - resampled)),
            # A mean over rows: its standard error needs no bootstrap.
            "brier_gain_se": float(np.std(brier_gain, ddof=1) / np.sqrt(n)) if n > 1 else 0.0,
            "rows": n,
        }
    return out


def _row_brier(prob: np.ndarray, truth: np.ndarray, multi_label: bool) -> np.ndarray:
    """Each row's share of brier_score: summed over classes, or averaged over labels."""
    squared = (np.asarray(prob, dtype=np.float64) - truth) ** 2
    return squared.mean(axis=1) if multi_label else squared.sum(axis=1)


def choose(scores: dict[str, dict[str, float]]) -> str:
    """The candidate kept: the lowest out-of-fold ECE among those beating none by more than
    Z_MARGIN deviations of ECE without a worse Brier score, or (on BRIER_ROUTE_ROWS rows or
    more) of Brier without a worse ECE; none when there is no such candidate."""
    plain = scores[NONE]

    def by_ece(s: dict[str, float]) -> bool:
        return plain["ece"] - s["ece"] > Z_MARGIN * s["gain_sd"] and s["brier"] <= plain["brier"]

    def by_brier(s: dict[str, float]) -> bool:
        return (s["rows"] >= BRIER_ROUTE_ROWS and s["ece"] < plain["ece"]
                and plain["brier"] - s["brier"] > Z_MARGIN * s["brier_gain_se"])

    better = [m for m, s in scores.items() if m != NONE and (by_ece(s) or by_brier(s))]
    return min(better, key=lambda m: scores[m]["ece"]) if better else NONE


def select_calibration(*, prob: np.ndarray, truth: np.ndarray,
                       multi_label: bool) -> Calibration:
    """The chosen map, fitted on all of validation, its selection recorded in the map."""
    prob = np.asarray(prob, dtype=np.float64)
    truth = np.asarray(truth, dtype=np.int64)
    selection: dict[str, Any] = {
        "chosen": NONE, "rows": len(prob), "folds": CV_FOLDS, "bins": ECE_BINS,
        "z_margin": Z_MARGIN, "events": "every article-label pair" if multi_label
        else "top class", "candidates": {}, "curve": []}
    if len(prob) < MIN_ROWS:
        selection["reason"] = f"fewer than {MIN_ROWS} validation rows"
        return Calibration(method=SELECT, multi_label=multi_label, selection=selection)
    held_out = {m: _out_of_fold(prob, truth, multi_label, m) for m in CANDIDATES}
    scores = _scores(prob, truth, multi_label, held_out)
    chosen = choose(scores)
    selection.update(chosen=chosen, candidates=scores, curve=reliability_curve(
        *calibration_events(held_out[chosen], truth, multi_label)))
    fitted = (fit_calibration(prob=prob, truth=truth, multi_label=multi_label, method=chosen,
                              checked=False) if chosen != NONE
              else Calibration(multi_label=multi_label))
    return Calibration(method=SELECT, multi_label=multi_label,
                       temperatures=fitted.temperatures, isotonic=fitted.isotonic,
                       platt=fitted.platt, selection=selection)
