"""`confseq` with the switch the simulation makes (stopping_cs.switch_index), over 600 synthetic
reviews whose ranked order is noisy enough to leave relevant records behind at the switch:
the stop claims "recall >= 0.95" falsely in at most alpha of them plus a binomial allowance.
The switch reads the ranked phase only, so it moves the stop, never the guarantee."""

from __future__ import annotations

import numpy as np

from screening import stopping_cs

ALPHA = 0.05
RUNS = 600


def _review(rng: np.random.Generator, *, total: int, relevant: int, noise: float) -> bool:
    """One review: True where the stop's claim is false (true recall below the target)."""
    truth = np.zeros(total, dtype=int)
    truth[rng.choice(total, relevant, replace=False)] = 1
    order = np.argsort(-(truth + rng.normal(0.0, noise, total)), kind="stable")
    ranked = [int(t) for t in truth[order]]
    switch = stopping_cs.switch_index(ranked=ranked, total=total, recall_target=0.95)
    switch = total if switch is None else switch
    pool = rng.permutation(ranked[switch:])
    prior_a, prior_b = stopping_cs.prior_from_ranked(recent=ranked[:switch])
    bound = stopping_cs.PoolBound(pool=len(pool), r_al=sum(ranked[:switch]), alpha=ALPHA,
                                  prior_a=prior_a, prior_b=prior_b)
    for relevant_drawn in pool:
        if bound.can_stop(recall_target=0.95):
            break
        bound.observe(relevant=bool(relevant_drawn))
    return bound.found / relevant < 0.95


def test_the_stop_after_its_switch_claims_the_target_falsely_in_at_most_alpha_of_runs(
        ) -> None:
    from scipy.stats import binom

    rng = np.random.default_rng(36)
    false_claims = sum(_review(rng, total=1000, relevant=100, noise=0.8) for _ in range(RUNS))
    assert false_claims <= binom.ppf(0.999, RUNS, ALPHA)


def test_those_reviews_leave_relevant_records_for_the_sample_to_find() -> None:
    # the check above means something only if the switch often leaves recall short of the
    # target, so that the sample has to find some (about 3 reviews in 10 here)
    rng = np.random.default_rng(37)
    short = 0
    for _ in range(50):
        truth = np.zeros(1000, dtype=int)
        truth[rng.choice(1000, 100, replace=False)] = 1
        order = np.argsort(-(truth + rng.normal(0.0, 0.8, 1000)), kind="stable")
        ranked = [int(t) for t in truth[order]]
        switch = stopping_cs.switch_index(ranked=ranked, total=1000, recall_target=0.95)
        short += switch is not None and sum(ranked[:switch]) < 95
    assert short >= 8
