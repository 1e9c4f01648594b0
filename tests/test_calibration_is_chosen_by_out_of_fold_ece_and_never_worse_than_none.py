"""The default calibration ("select") is chosen by out-of-fold ECE on the validation rows among
none, temperature, Platt and isotonic, and keeps none unless a method beats it beyond noise.

On synthetic probabilities whose truth is known (over-confident, under-confident, calibrated
already; single- and multi-label), across seeds, the chosen map's ECE on fresh rows from the
same distribution is never worse than none's by more than the ECE's own sampling noise at the
validation split's size; calibrated probabilities keep none; mis-calibrated ones are
recalibrated and their fresh ECE falls. Platt's fit recovers a known slope and offset, and the
selection's figures are kept in the manifest and read back."""

from __future__ import annotations

import json

import numpy as np
import pytest

from classification.engine.calibration import (
    Calibration,
    calibration_events,
    expected_calibration_error,
    fit_calibration,
    fit_platt,
)
from classification.engine.calibration_select import CANDIDATES, MIN_ROWS

VALIDATION_ROWS = 300
SEEDS = range(5)
# (log-odds sharpening): > 1 over-confident, < 1 under-confident, 1 calibrated already.
OVER, UNDER, CALIBRATED = 2.0, 0.4, 1.0


def draw(rng: np.random.Generator, n: int, multi_label: bool,
         sharpen: float) -> tuple[np.ndarray, np.ndarray]:
    """(reported probabilities, 0/1 truth): the truth's log-odds, reported times `sharpen`."""
    if multi_label:
        logit = rng.normal(-0.5, 1.5, (n, 4))
        truth = (rng.random((n, 4)) < 1 / (1 + np.exp(-logit))).astype(np.int64)
        return 1 / (1 + np.exp(-sharpen * logit)), truth
    logit = rng.normal(0, 1.2, (n, 3))
    q = np.exp(logit) / np.exp(logit).sum(axis=1, keepdims=True)
    chosen = (q.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    reported = np.exp(sharpen * logit)
    return reported / reported.sum(axis=1, keepdims=True), np.eye(3, dtype=np.int64)[chosen]


def ece(prob: np.ndarray, truth: np.ndarray, multi_label: bool) -> float:
    return float(expected_calibration_error(*calibration_events(prob, truth, multi_label)))


def sampling_noise(multi_label: bool) -> float:
    """The ECE a perfectly calibrated model shows on a validation-sized sample, averaged over
    draws: how far an ECE measured on that many rows is off by chance alone."""
    rng = np.random.default_rng(99)
    return float(np.mean([ece(*draw(rng, VALIDATION_ROWS, multi_label, CALIBRATED), multi_label)
                          for _ in range(20)]))


def fresh_ece(multi_label: bool, sharpen: float, seed: int) -> tuple[Calibration, float, float]:
    """The selection fitted on validation rows; (map, fresh ECE of none, of the map)."""
    rng = np.random.default_rng(seed)
    val_p, val_y = draw(rng, VALIDATION_ROWS, multi_label, sharpen)
    new_p, new_y = draw(rng, 4000 if multi_label else 8000, multi_label, sharpen)
    chosen = fit_calibration(prob=val_p, truth=val_y, multi_label=multi_label)
    return chosen, ece(new_p, new_y, multi_label), ece(chosen.apply(new_p), new_y, multi_label)


@pytest.mark.parametrize("multi_label", [True, False], ids=["multi-label", "single-label"])
@pytest.mark.parametrize("sharpen", [OVER, UNDER, CALIBRATED],
                         ids=["over-confident", "under-confident", "calibrated"])
def test_the_chosen_calibration_is_never_worse_than_none_on_fresh_rows(
        multi_label: bool, sharpen: float) -> None:
    noise = sampling_noise(multi_label)
    runs = [fresh_ece(multi_label, sharpen, seed) for seed in SEEDS]
    for chosen, plain, calibrated in runs:
        assert chosen.method == "select"
        assert calibrated <= plain + noise, (chosen.chosen, plain, calibrated, noise)
    assert np.mean([c for _, _, c in runs]) <= np.mean([p for _, p, _ in runs]) + 1e-9


@pytest.mark.parametrize("multi_label", [True, False], ids=["multi-label", "single-label"])
def test_probabilities_calibrated_already_keep_none(multi_label: bool) -> None:
    for seed in SEEDS:
        chosen, plain, calibrated = fresh_ece(multi_label, CALIBRATED, seed)
        assert chosen.chosen == "none", chosen.selection["candidates"]
        assert chosen.is_identity
        assert calibrated == plain


@pytest.mark.parametrize("multi_label", [True, False], ids=["multi-label", "single-label"])
@pytest.mark.parametrize("sharpen", [OVER, UNDER], ids=["over-confident", "under-confident"])
def test_mis_calibrated_probabilities_are_recalibrated_and_their_fresh_ece_falls(
        multi_label: bool, sharpen: float) -> None:
    for seed in SEEDS:
        chosen, plain, calibrated = fresh_ece(multi_label, sharpen, seed)
        assert chosen.chosen in ("temperature", "platt", "isotonic")
        assert calibrated < plain / 2, (chosen.chosen, plain, calibrated)
        scores = chosen.selection["candidates"]
        # The winner has the lowest out-of-fold ECE of all four candidates.
        assert scores[chosen.chosen]["ece"] == min(s["ece"] for s in scores.values())


def test_platt_recovers_a_known_slope_and_offset() -> None:
    rng = np.random.default_rng(7)
    z = rng.normal(0, 2, 40000)
    a, b = 0.5, -1.0  # the truth's log-odds are a z + b; the model reports sigmoid(z)
    y = (rng.random(len(z)) < 1 / (1 + np.exp(-(a * z + b)))).astype(np.int64)
    fitted_a, fitted_b = fit_platt(1 / (1 + np.exp(-z)), y)
    assert fitted_a == pytest.approx(a, abs=0.03)
    assert fitted_b == pytest.approx(b, abs=0.05)
    # Calibrated already: the identity, a = 1 and b = 0.
    y = (rng.random(len(z)) < 1 / (1 + np.exp(-z))).astype(np.int64)
    assert fit_platt(1 / (1 + np.exp(-z)), y) == pytest.approx([1.0, 0.0], abs=0.05)
    # One class only: nothing to fit, the identity.
    assert fit_platt(np.array([0.2, 0.7]), np.array([1, 1])) == [1.0, 0.0]


def test_the_selection_is_kept_in_the_manifest_and_reads_back() -> None:
    rng = np.random.default_rng(3)
    val_p, val_y = draw(rng, VALIDATION_ROWS, True, OVER)
    chosen = fit_calibration(prob=val_p, truth=val_y, multi_label=True)
    stored = json.loads(json.dumps(chosen.as_dict()))  # as the manifest holds it
    selection = stored["selection"]
    assert selection["rows"] == VALIDATION_ROWS
    assert set(selection["candidates"]) == set(CANDIDATES)
    assert selection["chosen"] == chosen.chosen != "none"
    assert sum(p["count"] for p in selection["curve"]) == VALIDATION_ROWS * 4
    again = Calibration.from_dict(stored)
    assert np.array_equal(again.apply(val_p), chosen.apply(val_p))
    assert again.chosen == chosen.chosen
    # A map saved before Platt and the selection existed reads and applies as it did.
    old = Calibration.from_dict({"method": "temperature", "multi_label": True,
                                 "temperatures": [2.0] * 4, "isotonic": [None] * 4})
    assert old.selection == {}
    assert old.chosen == "temperature"
    assert np.allclose(old.apply(val_p), 1 / (1 + np.exp(-np.log(val_p / (1 - val_p)) / 2)))


def test_a_split_too_small_to_choose_on_keeps_none_and_says_why() -> None:
    rng = np.random.default_rng(5)
    val_p, val_y = draw(rng, MIN_ROWS - 1, True, OVER)
    chosen = fit_calibration(prob=val_p, truth=val_y, multi_label=True)
    assert chosen.chosen == "none"
    assert chosen.is_identity
    assert chosen.selection["rows"] == MIN_ROWS - 1
    assert str(MIN_ROWS) in chosen.selection["reason"]
