"""The confidence-sequence rule on synthetic pools with a known truth: across many seeds of
sampling alone (no ranker) the sequence excludes the true count at some look (2,000 runs), and
the stop claims "recall >= target" falsely (1,000 runs), in at most alpha of the runs plus a
binomial allowance, whatever the prior (uniform, or one that expects far fewer or more)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from screening import stopping_cs

ALPHA = 0.05


def _allowance(runs: int) -> int:
    """The 99.9% quantile of Binomial(runs, alpha): a valid rule exceeds it once in 1,000."""
    from scipy.stats import binom

    return int(binom.ppf(0.999, runs, ALPHA))


@pytest.mark.parametrize(("pool", "relevant", "prior_b"), [
    (100, 5, 1.0), (100, 5, 400.0), (80, 30, 1.0), (80, 30, 400.0),
])
def test_the_true_count_leaves_the_sequence_in_at_most_alpha_of_2000_runs(pool, relevant,
                                                                           prior_b) -> None:
    rng = np.random.default_rng([pool, relevant, int(prior_b)])
    urn = np.zeros(pool, dtype=int)
    urn[:relevant] = 1
    threshold = math.log(1 / ALPHA)
    excluded = 0
    for _ in range(2000):
        draws = rng.permutation(urn)
        k = 0
        for n, x in enumerate(draws, start=1):
            k += int(x)
            if stopping_cs.log_martingale(pool=pool, sampled=n, k=k, big_k=relevant,
                                          prior_a=1.0, prior_b=prior_b) >= threshold:
                excluded += 1
                break
    assert excluded <= _allowance(2000), excluded


@pytest.mark.parametrize(("pool", "left", "r_al", "prior_b"), [
    # recall at the switch 60/70, 80/100 and 100/140: the sample must find records to stop
    (200, 10, 60, 1.0), (250, 20, 80, 40.0), (150, 40, 100, 1000.0),
])
def test_the_stop_claims_the_target_falsely_in_at_most_alpha_of_1000_runs(pool, left, r_al,
                                                                          prior_b) -> None:
    tau = 0.95
    rng = np.random.default_rng([pool, left, r_al])
    urn = np.zeros(pool, dtype=int)
    urn[:left] = 1
    false_claims, read = 0, []
    for _ in range(1000):
        bound = stopping_cs.PoolBound(pool=pool, r_al=r_al, alpha=ALPHA, prior_a=1.0,
                                      prior_b=prior_b)
        for x in rng.permutation(urn):
            if bound.can_stop(recall_target=tau):
                break
            bound.observe(relevant=bool(x))
        true_recall = bound.found / (r_al + left)
        assert bound.claimable_recall() >= tau  # it stops only with the claim (or reads all)
        false_claims += true_recall < tau
        read.append(bound.sampled / pool)
    assert false_claims <= _allowance(1000), false_claims
    assert np.mean(read) < 1.0  # and it does stop before the pool's end
