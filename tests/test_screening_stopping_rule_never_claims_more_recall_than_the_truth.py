"""The Callaghan & Müller-Hansen (2020) stopping rule: hand-checked p-values, and on simulated
random samples the recall it claims is below the true recall at least as often as promised."""

from __future__ import annotations

import numpy as np
import pytest

from screening import stopping


@pytest.mark.parametrize(("pool", "sampled", "k", "r_al", "tau", "expected"), [
    # K = floor(10 / 0.95 - 10 + 1) = 1: p = P(the one relevant is not among 10 of 100) = 0.9
    (100, 10, 0, 10, 0.95, 0.9),
    # K = floor(30 / 0.9 - 30 + 1) = 4: p = C(46,20) / C(50,20) = 30*29*28*27 / (50*49*48*47)
    (50, 20, 0, 30, 0.9, 657720 / 5527200),
    # r = 10, K = floor(10 / 0.95 - 9 + 1) = 2: p = 1 - C(18,3) / C(20,5) = 1 - 816 / 15504
    (20, 5, 1, 9, 0.95, 1 - 816 / 15504),
])
def test_p_value_matches_the_hand_computed_hypergeometric_tail(pool, sampled, k, r_al, tau,
                                                               expected) -> None:
    assert stopping.p_value(pool=pool, sampled=sampled, k=k, r_al=r_al,
                            recall_target=tau) == pytest.approx(expected, rel=1e-9)


def test_nothing_sampled_gives_no_evidence_and_a_whole_pool_read_gives_full_recall() -> None:
    assert stopping.p_value(pool=100, sampled=0, k=0, r_al=5, recall_target=0.95) == 1.0
    assert stopping.claimable_recall(pool=50, sampled=50, k=2, r_al=8, alpha=0.05) == 1.0


def test_more_needed_is_the_least_sample_that_rejects_when_nothing_more_is_found() -> None:
    extra = stopping.more_needed(pool=1000, sampled=0, k=0, r_al=40, recall_target=0.95,
                                 alpha=0.05)
    assert stopping.p_value(pool=1000, sampled=extra, k=0, r_al=40, recall_target=0.95) < 0.05
    assert stopping.p_value(pool=1000, sampled=extra - 1, k=0, r_al=40,
                            recall_target=0.95) >= 0.05


def _one_run(rng: np.random.Generator, *, total: int, relevant: int, ranked: int,
             tau: float, alpha: float) -> tuple[float, float, float]:
    truth = np.zeros(total, dtype=int)
    truth[:relevant] = 1
    weights = np.where(truth == 1, 6.0, 1.0)  # a ranking that is good but not perfect
    first = rng.choice(total, size=ranked, replace=False, p=weights / weights.sum())
    rest = rng.permutation(np.setdiff1d(np.arange(total), first))
    r_al, k, n = int(truth[first].sum()), 0, 0
    for n, index in enumerate(rest, start=1):
        k += int(truth[index])
        if stopping.p_value(pool=len(rest), sampled=n, k=k, r_al=r_al,
                            recall_target=tau) < alpha:
            break
    true_recall = (r_al + k) / relevant
    claim = stopping.claimable_recall(pool=len(rest), sampled=n, k=k, r_al=r_al, alpha=alpha)
    return true_recall, claim, n / len(rest)


def test_on_200_random_orders_the_stop_reaches_the_target_and_the_claim_the_truth() -> None:
    rng = np.random.default_rng(20200273)
    runs = [_one_run(rng, total=400, relevant=40, ranked=100, tau=0.9, alpha=0.05)
            for _ in range(200)]
    reached = sum(1 for true_recall, _, _ in runs if true_recall >= 0.9)
    honest = sum(1 for true_recall, claim, _ in runs if claim <= true_recall)
    assert reached >= 190, reached  # at least 95% of the runs
    assert honest >= 190, honest
