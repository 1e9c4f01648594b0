"""The confidence-sequence rule (screening.stopping_cs, Waudby-Smith & Ramdas 2020): the
prior-posterior-ratio martingale and the values the sequence excludes, computed by hand on an
urn of 10 records."""

from __future__ import annotations

import math

import pytest

from screening import stopping_cs


def _martingale(**kwargs) -> float:
    return math.exp(stopping_cs.log_martingale(**kwargs))


@pytest.mark.parametrize(("big_k", "expected"), [
    # Uniform prior (Beta(1, 1)): P(K) = 1/11. After three irrelevant draws the marginal of the
    # sequence is B(1, 4) / B(1, 1) = 1/4 and its likelihood under K is
    # (10-K)(9-K)(8-K) / (10*9*8), so M = (1/4) * 720 / ((10-K)(9-K)(8-K)).
    (0, 0.25), (5, 180 / 60), (6, 180 / 24), (7, 180 / 6),
])
def test_three_irrelevant_draws_from_ten_give_the_hand_computed_martingale(big_k, expected
                                                                          ) -> None:
    assert _martingale(pool=10, sampled=3, k=0, big_k=big_k, prior_a=1.0,
                       prior_b=1.0) == pytest.approx(expected, rel=1e-9)


def test_one_relevant_then_one_irrelevant_gives_fifteen_over_k_times_ten_minus_k() -> None:
    # marginal B(2, 2) / B(1, 1) = 1/6; likelihood K (10 - K) / 90; M = 15 / (K (10 - K))
    for big_k in range(1, 10):
        assert _martingale(pool=10, sampled=2, k=1, big_k=big_k, prior_a=1.0,
                           prior_b=1.0) == pytest.approx(15 / (big_k * (10 - big_k)), rel=1e-9)
    # what the sample rules out is excluded outright: no relevant left after one was drawn,
    # or ten relevant after an irrelevant one
    assert stopping_cs.log_martingale(pool=10, sampled=2, k=1, big_k=0, prior_a=1.0,
                                      prior_b=1.0) == math.inf
    assert stopping_cs.log_martingale(pool=10, sampled=2, k=1, big_k=10, prior_a=1.0,
                                      prior_b=1.0) == math.inf


def test_at_alpha_five_percent_three_irrelevant_draws_exclude_seven_but_not_six() -> None:
    bound = stopping_cs.PoolBound(pool=10, r_al=0, alpha=0.05, prior_a=1.0, prior_b=1.0)
    for _ in range(3):
        bound.observe(relevant=False)
    assert (bound.upper, bound.left_upper) == (6, 6)  # M(7) = 30 >= 20 > M(6) = 7.5
    # at alpha 0.02 (threshold 50) seven stays in: 30 < 50
    loose = stopping_cs.PoolBound(pool=10, r_al=0, alpha=0.02, prior_a=1.0, prior_b=1.0)
    for _ in range(3):
        loose.observe(relevant=False)
    assert loose.upper == 7


def test_the_upper_bound_never_rises_and_the_whole_pool_read_leaves_none() -> None:
    bound = stopping_cs.PoolBound(pool=10, r_al=5, alpha=0.05, prior_a=1.0, prior_b=1.0)
    uppers = []
    for relevant in (False, True, False, False, True, False, False, False, False, False):
        bound.observe(relevant=relevant)
        uppers.append(bound.upper)
    assert uppers == sorted(uppers, reverse=True)
    assert (bound.upper, bound.left_upper, bound.claimable_recall()) == (2, 0, 1.0)


def test_the_stop_claims_found_over_found_plus_the_upper_bound_left() -> None:
    # 19 found and at most 1 left: 19 / 20 = 0.95 exactly reaches a 0.95 target
    assert stopping_cs.recall_lower_bound(found=19, left_upper=1) == pytest.approx(0.95)
    bound = stopping_cs.PoolBound(pool=10, r_al=19, alpha=0.05, prior_a=1.0, prior_b=1.0)
    for _ in range(3):
        bound.observe(relevant=False)
    assert bound.claimable_recall() == pytest.approx(19 / 25)  # upper 6, k 0
    assert not bound.can_stop(recall_target=0.95)


def test_the_prior_mean_is_a_quarter_of_the_ranked_phases_recent_yield_with_one_added_each_way(
) -> None:
    a, b = stopping_cs.prior_from_ranked(recent=[1] * 50 + [0] * 100)
    assert a == 1.0
    assert a / (a + b) == pytest.approx(0.25 * 1 / 102)  # only the last 100 count
    a, b = stopping_cs.prior_from_ranked(recent=[1, 0, 0, 0])
    assert a / (a + b) == pytest.approx(0.25 * 2 / 6)
