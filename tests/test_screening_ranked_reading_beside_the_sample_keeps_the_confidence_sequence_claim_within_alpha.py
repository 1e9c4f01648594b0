"""``confseq_beside`` on synthetic reviews with a known truth: beside the uniform sample the
reviewer reads pool records in an order of its own (the relevant ones first, as a good ranker
would, or the irrelevant ones first, as a bad one would). Over 400 reviews per case the claim
"recall >= 0.95" is false in at most alpha plus two standard errors, a drawn record already
read costs nothing, and a bound that drops its confidence adjustment is caught."""

from __future__ import annotations

import math

import numpy as np
import pytest

from screening import stopping_cs, stopping_cs_beside

ALPHA = 0.05
RUNS = 400
TARGET = 0.95


def review(*, urn: np.ndarray, r_al: int, alpha: float, ranked: list[int],
           rng: np.random.Generator) -> tuple[stopping_cs_beside.BesideBound, int]:
    """One review: a ranked read, then a draw, until the claim; returns the bound and reads."""
    prior_a, prior_b = stopping_cs.prior_from_ranked(recent=[0] * 99 + [1])
    beside = stopping_cs_beside.BesideBound(bound=stopping_cs.PoolBound(
        pool=len(urn), r_al=r_al, alpha=alpha, prior_a=prior_a, prior_b=prior_b))
    queue, reads = iter(ranked), 0
    for record in rng.permutation(len(urn)):
        if beside.can_stop(recall_target=TARGET):
            break
        pick = next(queue, None)
        if pick is not None:
            reads += beside.ranked_read(record=pick, relevant=bool(urn[pick]))
        reads += beside.draw(record=int(record), relevant=bool(urn[record]))
    return beside, reads


def false_claims(*, pool: int, left: int, r_al: int, alpha: float, ranking: str,
                 seed: int) -> int:
    rng = np.random.default_rng(seed)
    urn = np.zeros(pool, dtype=int)
    urn[:left] = 1
    # beside the sample, a short run of ranked reading: the relevant records first, or last
    order = list(range(pool)) if ranking == "good" else list(range(pool))[::-1]
    false = 0
    for _ in range(RUNS):
        beside, reads = review(urn=urn, r_al=r_al, alpha=alpha, ranked=order[:pool // 10],
                               rng=rng)
        assert reads == len(beside.known)  # every record read once, known ones for free
        false += beside.found / (r_al + left) < TARGET
    return false


def within_alpha(false: int) -> bool:
    return false / RUNS <= ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / RUNS)


@pytest.mark.parametrize(("pool", "left", "r_al"), [(200, 4, 60), (300, 12, 150)])
@pytest.mark.parametrize("ranking", ["good", "bad"])
def test_the_claim_is_false_in_at_most_alpha_plus_two_standard_errors(pool, left, r_al,
                                                                       ranking) -> None:
    false = false_claims(pool=pool, left=left, r_al=r_al, alpha=ALPHA, ranking=ranking,
                         seed=pool + left)
    assert within_alpha(false), false


def test_a_bound_without_its_confidence_adjustment_is_caught() -> None:
    false = false_claims(pool=200, left=4, r_al=60, alpha=1.0, ranking="bad", seed=2)
    assert not within_alpha(false), false


def test_a_record_read_both_ways_is_read_once_and_counted_once() -> None:
    beside = stopping_cs_beside.BesideBound(bound=stopping_cs.PoolBound(
        pool=10, r_al=5, alpha=ALPHA, prior_a=1.0, prior_b=10.0))
    assert beside.ranked_read(record=3, relevant=True) is True
    assert beside.draw(record=3, relevant=True) is False  # known: no reading
    assert beside.ranked_read(record=3, relevant=True) is False
    assert (beside.known_relevant, beside.found, beside.bound.sampled) == (1, 6, 1)
