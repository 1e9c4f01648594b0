"""The ``confseq_zero`` certificate on synthetic reviews with a known truth: a ranked phase
has found ``r_al`` relevant records and left ``left`` in a pool; the rule samples the pool
uniformly until it claims recall >= 0.95. Over 400 reviews per case the claim is false in at
most alpha plus two standard errors of the runs, whatever the prior's weight on none left; the
same check catches a bound that drops its confidence adjustment (1 / alpha)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from screening import stopping_cs, stopping_cs_zero

ALPHA = 0.05
RUNS = 400
TARGET = 0.95


def false_claims(*, pool: int, left: int, r_al: int, alpha: float, zero_weight: float,
                 seed: int) -> tuple[int, float]:
    """False claims out of RUNS reviews, and the mean share of the pool read."""
    rng = np.random.default_rng(seed)
    urn = np.zeros(pool, dtype=int)
    urn[:left] = 1
    prior_a, prior_b = stopping_cs.prior_from_ranked(recent=[0] * 99 + [1])
    false, read = 0, []
    for _ in range(RUNS):
        bound = stopping_cs_zero.ZeroPoolBound(pool=pool, r_al=r_al, alpha=alpha,
                                               prior_a=prior_a, prior_b=prior_b,
                                               zero_weight=zero_weight)
        for relevant in rng.permutation(urn):
            if bound.can_stop(recall_target=TARGET):
                break
            bound.observe(relevant=bool(relevant))
        false += bound.found / (r_al + left) < TARGET
        read.append(bound.sampled / pool)
    return false, float(np.mean(read))


def within_alpha(false: int) -> bool:
    return false / RUNS <= ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / RUNS)


# left is the least count that puts recall below 0.95 (r_al / (r_al + left) < 0.95, and still
# below once the sample finds one or two): the hardest truth for a claim that none is left.
@pytest.mark.parametrize(("pool", "left", "r_al"), [(200, 4, 60), (400, 5, 80), (150, 7, 110)])
@pytest.mark.parametrize("zero_weight", [0.5, 0.9])
def test_the_claim_is_false_in_at_most_alpha_plus_two_standard_errors(pool, left, r_al,
                                                                       zero_weight) -> None:
    false, read = false_claims(pool=pool, left=left, r_al=r_al, alpha=ALPHA,
                               zero_weight=zero_weight, seed=pool + left)
    assert within_alpha(false), false
    assert read < 1.0  # it does stop before the pool's end


def test_a_bound_without_its_confidence_adjustment_is_caught() -> None:
    # alpha = 1: a count is excluded as soon as its martingale passes 1, not 1 / alpha
    false, _ = false_claims(pool=200, left=4, r_al=60, alpha=1.0, zero_weight=0.5, seed=1)
    assert not within_alpha(false), false
