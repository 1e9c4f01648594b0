"""Cohen's kappa and its large-sample 95% CI on a hand-computed 2x2 example."""

from __future__ import annotations

import math

import pytest

from screening.agreement import agreement


def test_kappa_and_its_interval_match_the_hand_computation() -> None:
    pairs = ([("yes", "yes")] * 4 + [("no", "no")] * 3 + [("yes", "no")] * 2
             + [("no", "yes")])
    # p_o = 0.7; A says yes 6/10, B 5/10: p_e = 0.6*0.5 + 0.4*0.5 = 0.5; kappa = 0.2/0.5 = 0.4
    # SE = sqrt(0.7 * 0.3 / (10 * 0.5^2)) = sqrt(0.084)
    result = agreement(pairs=pairs)
    se = math.sqrt(0.084)
    assert result["percent_agreement"] == 70.0
    assert result["kappa"] == pytest.approx(0.4)
    assert result["kappa_low"] == pytest.approx(0.4 - 1.959964 * se, abs=1e-4)
    assert result["kappa_high"] == pytest.approx(0.4 + 1.959964 * se, abs=1e-4)


def test_kappa_is_undefined_when_both_always_give_the_same_single_answer() -> None:
    result = agreement(pairs=[("no", "no")] * 5)
    assert result["percent_agreement"] == 100.0
    assert result["kappa"] is None
    assert agreement(pairs=[])["n"] == 0
