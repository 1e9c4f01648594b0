"""Callaghan & Müller-Hansen's test, looked at after every random record, misses its confidence
once relevant records turn up in the sample; spending alpha over the relevant records found
(screening.stopping.alpha_spent) keeps it. Simulated where the truth is known: the pool still
holds more relevant records than a 95% recall allows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from screening import stopping


def test_alpha_spent_is_the_basel_share_of_alpha_and_sums_to_alpha() -> None:
    # 6 / pi^2 = 0.6079: the first level is 0.0304 of 0.05, the second a quarter of it
    assert stopping.alpha_spent(alpha=0.05, k=0) == pytest.approx(0.05 * 6 / math.pi ** 2)
    assert stopping.alpha_spent(alpha=0.05, k=1) == pytest.approx(
        stopping.alpha_spent(alpha=0.05, k=0) / 4)
    assert sum(stopping.alpha_spent(alpha=0.05, k=k) for k in range(100_000)) == (
        pytest.approx(0.05, rel=1e-4))


def test_the_spent_state_stops_only_below_the_spent_level() -> None:
    # k = 0, r_AL = 40: K = floor(40 / 0.95 - 40 + 1) = 3; the spent level 0.0304 needs more
    # random records than 0.05 does
    plain = stopping.stop_state(label="x", pool=1000, sampled=0, k=0, r_al=40,
                                recall_target=0.95, confidence=0.95)
    spent = stopping.stop_state(label="x", pool=1000, sampled=0, k=0, r_al=40,
                                recall_target=0.95, confidence=0.95, spent=True)
    assert spent.more_needed > plain.more_needed
    at = spent.more_needed
    assert stopping.p_value(pool=1000, sampled=at, k=0, r_al=40, recall_target=0.95) < (
        stopping.alpha_spent(alpha=0.05, k=0))


def _review(rng: np.random.Generator, *, spent: bool, pool: int = 400, left: int = 12,
            r_al: int = 200) -> float:
    """The true recall where the test stops; `left` relevant records in the pool."""
    order = rng.permutation(np.r_[np.ones(left, dtype=int), np.zeros(pool - left, dtype=int)])
    k = 0
    for n, relevant in enumerate(order, start=1):
        k += int(relevant)
        alpha = stopping.alpha_spent(alpha=0.05, k=k) if spent else 0.05
        if stopping.p_value(pool=pool, sampled=n, k=k, r_al=r_al, recall_target=0.95) < alpha:
            return (r_al + k) / (r_al + left)
    return 1.0


def test_looking_after_every_record_misses_95_percent_unless_alpha_is_spent() -> None:
    runs = 200
    # 95% promised: 10 misses expected at most; the binomial's own spread (+3 sd) on top
    allowed = math.ceil(runs * 0.05 + 3 * math.sqrt(runs * 0.05 * 0.95))
    plain = np.random.default_rng(36)
    misses_plain = sum(_review(plain, spent=False) < 0.95 for _ in range(runs))
    spent = np.random.default_rng(36)
    misses_spent = sum(_review(spent, spent=True) < 0.95 for _ in range(runs))
    assert misses_spent <= runs * 0.05, misses_spent
    assert misses_plain > runs * 0.05, misses_plain  # why the spent rule exists
    assert misses_spent <= allowed
