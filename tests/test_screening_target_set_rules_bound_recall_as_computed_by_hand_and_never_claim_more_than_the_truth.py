"""The target-set stopping rules (QBCB, Lewis, Yang & Frieder 2021; the target method, Cormack &
Grossman 2016): their cutoffs and claims match hand computations, and on many simulated reviews
where the truth is known they reach the recall target, and claim no more than the truth, at
least as often as their confidence promises."""

from __future__ import annotations

import math

import numpy as np
import pytest

from screening import simulation, stopping_rules


@pytest.mark.parametrize(("tau", "confidence", "expected"), [
    (0.95, 0.95, 59),  # 0.95**58 = 0.0510 > 0.05 >= 0.95**59 = 0.0485
    (0.7, 0.95, 9),    # 0.7**8 = 0.0576 > 0.05 >= 0.7**9 = 0.0404
    (0.9, 0.9, 22),    # 0.9**21 = 0.1094 > 0.1 >= 0.9**22 = 0.0985
])
def test_the_target_method_needs_the_fewest_positives_whose_all_found_bound_holds(
        tau, confidence, expected) -> None:
    assert stopping_rules.target_positives_needed(recall_target=tau,
                                                  confidence=confidence) == expected


@pytest.mark.parametrize(("positives", "tau", "expected"), [
    # P(Bin(10, .7) >= 10) = .7**10 = .0282 <= .05; P(>= 9) = .0282 + 10 * .7**9 * .3 = .149
    (10, 0.7, 10),
    # P(Bin(20, .5) >= 15) = (15504 + 4845 + 1140 + 190 + 20 + 1) / 2**20 = .0207;
    # P(>= 14) adds C(20,14) = 38760: .0577 > .05
    (20, 0.5, 15),
    (3, 0.95, None),  # .95**3 = .857: three target positives cannot certify 95% recall
    (59, 0.95, 59),
])
def test_qbcb_cutoff_is_the_least_j_whose_binomial_tail_is_within_alpha(
        positives, tau, expected) -> None:
    assert stopping_rules.qbcb_cutoff(positives=positives, recall_target=tau,
                                      confidence=0.95) == expected


def test_the_claim_with_every_target_positive_reached_is_alpha_to_the_one_over_r() -> None:
    # the r-th order statistic of r uniforms is Beta(r, 1): P(U < x) = x**r
    assert stopping_rules.qbcb_claimable_recall(positives=10, reached=10, confidence=0.95) == (
        pytest.approx(0.05 ** 0.1, rel=1e-9))
    assert stopping_rules.qbcb_claimable_recall(positives=10, reached=0, confidence=0.95) == 0.0
    state = stopping_rules.target_state(rule="target", target_size=600, positives=59,
                                        reached=58, recall_target=0.95, confidence=0.95)
    assert (state.cutoff, state.can_stop) == (59, False)


def _one_review(rng: np.random.Generator, *, rule: str, tau: float) -> tuple[float, float]:
    """A review whose ranked order is good but not perfect and blind to the target set."""
    total, relevant = 1500, 150
    truth = np.zeros(total, dtype=int)
    truth[:relevant] = 1
    keys = rng.random(total) ** np.where(truth == 1, 6.0, 1.0)  # relevant ones tend to be first
    ranked = list(np.argsort(-keys))
    target = simulation.target_set_draw(truth, rng, rule=rule, recall_target=tau,
                                        confidence=0.95)
    review = {"order": ranked, "last_scores": keys, "switch_at": len(ranked)}
    figures, order = simulation._target_rule(review, truth, target, rule=rule,
                                             recall_target=tau, confidence=0.95)
    stopped_at = figures["ranked_phase"] + figures["target_set"]
    true_recall = truth[order[:stopped_at]].sum() / relevant
    positives = int(truth[target].sum())
    claim = stopping_rules.qbcb_claimable_recall(
        positives=positives, reached=figures["cutoff"] or positives, confidence=0.95)
    return true_recall, claim


@pytest.mark.parametrize("rule", ["qbcb", "target"])
def test_on_300_reviews_the_stop_reaches_the_target_and_the_claim_stays_below_the_truth(
        rule) -> None:
    rng = np.random.default_rng(2021)
    runs = [_one_review(rng, rule=rule, tau=0.8) for _ in range(300)]
    # 95% promised: at most 15 misses expected; allow the binomial's own spread (+3 sd)
    allowed = math.ceil(300 * 0.05 + 3 * math.sqrt(300 * 0.05 * 0.95))
    assert sum(1 for recall, _ in runs if recall < 0.8) <= allowed
    assert sum(1 for recall, claim in runs if claim > recall) <= allowed
