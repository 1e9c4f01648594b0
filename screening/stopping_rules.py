"""Stopping rules with a recall guarantee, beside Callaghan & Müller-Hansen (screening.stopping).

Pure Python and scipy, no Django. Each rule in ``RULES`` names its paper and the assumptions
its guarantee rests on; the page and docs/screening.md show them. A rule here is a *stop*: it
claims "recall >= target" only with the stated confidence. Estimates without a proof (the
ranked phase's recent yield, say) may be shown, never used to stop.

Target-set rules (Lewis, Yang & Frieder 2021, "Certifying one-phase technology-assisted
reviews", CIKM '21, doi:10.1145/3459637.3482415; Cormack & Grossman 2016, "Engineering quality
and reliability in technology-assisted review", SIGIR '16, doi:10.1145/2911451.2911510):

* Before the ranked phase, a target set is drawn uniformly at random from the collection and
  read. Its r relevant records are a random sample of all relevant records.
* The ranked review must not depend on which records are in the target set: a target record
  is neither trained on nor skipped until the ranked order reaches it (then its decision is
  already known and costs no reading). So the position of each target positive in the ranked
  order is that of a random relevant record, and the recall at the point where the ranked
  phase has reached j of them is the j-th order statistic of r uniform recalls: it falls below
  tau with probability P(Binomial(r, tau) >= j) (sampling with replacement; a sample drawn
  without replacement is hypergeometric, whose tail is smaller, so the bound is conservative).
* QBCB stops at the least j with P(Binomial(r, tau) >= j) <= alpha. Cormack & Grossman's target
  method draws until it has K relevant records and stops when the ranked phase has reached all
  K; with K the least integer with tau**K <= alpha it is the QBCB with j = r (Lewis et al. 2021).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from screening.stopping import TEST_NAME as CALLAGHAN_TEST
from screening.stopping_cs import ASSUMPTIONS as CONFSEQ_ASSUMPTIONS
from screening.stopping_cs import TEST_NAME as CONFSEQ_TEST
from screening.stopping_cs_beside import ASSUMPTIONS as CONFSEQ_BESIDE_ASSUMPTIONS
from screening.stopping_cs_beside import TEST_NAME as CONFSEQ_BESIDE_TEST
from screening.stopping_cs_zero import TEST_NAME as CONFSEQ_ZERO_TEST


@dataclass(frozen=True)
class Rule:
    name: str
    title: str
    citation: str
    assumptions: tuple[str, ...]
    needs_target_set: bool


RULES: dict[str, Rule] = {rule.name: rule for rule in (
    Rule("callaghan", "Random sample after the ranked phase (hypergeometric test)", CALLAGHAN_TEST,
         ("After the switch, records are read uniformly at random, without replacement, from "
          "those not yet read, and every one drawn is read.",
          "Decisions are correct: a relevant record read is recognised as relevant.",
          "The switch may come at any time; only the random sample is tested."), False),
    Rule("callaghan_spent", "Random sample after the ranked phase, valid at every look",
         CALLAGHAN_TEST + "; alpha spent over the relevant records the sample finds "
         "(screening.stopping.alpha_spent)",
         ("After the switch, records are read uniformly at random, without replacement, from "
          "those not yet read, and every one drawn is read.",
          "Decisions are correct: a relevant record read is recognised as relevant.",
          "The switch may come at any time; only the random sample is tested, after every "
          "record, at a level that shrinks with each relevant record the sample finds."), False),
    Rule("confseq", "Random sample after the ranked phase, a confidence sequence for the "
         "relevant records left", CONFSEQ_TEST + " (screening.stopping_cs)",
         CONFSEQ_ASSUMPTIONS, False),
    # Simulated only (no session can pick it yet): confseq's sample, switch and stop, with a
    # prior that also puts half its mass on no relevant record left.
    Rule("confseq_zero", "Random sample after the ranked phase, a confidence sequence whose "
         "prior allows that none is left", CONFSEQ_ZERO_TEST, CONFSEQ_ASSUMPTIONS, False),
    # Simulated only: confseq's sample, with ranked reading beside it counted as found.
    Rule("confseq_beside", "Random sample after the ranked phase with ranked reading beside "
         "it, a confidence sequence for the relevant records left", CONFSEQ_BESIDE_TEST,
         CONFSEQ_BESIDE_ASSUMPTIONS, False),
    Rule("qbcb", "Quantile binomial coverage bound with a target set drawn first",
         "Lewis, Yang & Frieder (2021), Certifying one-phase technology-assisted reviews, "
         "CIKM '21, doi:10.1145/3459637.3482415",
         ("The target set is drawn uniformly at random before the ranked phase and read whole.",
          "The ranked order does not depend on which records are in the target set: target "
          "records are trained on only once the ranked order reaches them.",
          "Decisions are correct.",
          "It needs enough relevant records in the target set (59 at recall 0.95 and "
          "confidence 0.95); with fewer, it cannot certify and the collection is read."), True),
    Rule("target", "Target method: draw until K relevant, stop when all K are reached",
         "Cormack & Grossman (2016), Engineering quality and reliability in technology-assisted "
         "review, SIGIR '16, doi:10.1145/2911451.2911510; K from Lewis et al. (2021)",
         ("Records are drawn uniformly at random until K of them are relevant, before the "
          "ranked phase; K is the least integer with target**K <= 1 - confidence.",
          "The ranked order does not depend on which records are in the target set.",
          "Decisions are correct."), True),
)}
# The rule that read least while reaching the target in at least 19 of 20 runs on every
# corpus and label simulated (docs/screening.md, "Stopping rules compared"): confseq with its
# own switch, 20 of 20 on the demo data's four labels and on 10% and 3% copies of two of them,
# reading 0.727 of the records on average against callaghan_spent's 0.770. The Cohen reviews
# that chose callaghan_spent before were not on the machine that measured confseq.
DEFAULT_RULE = "confseq"


def target_positives_needed(*, recall_target: float, confidence: float) -> int:
    """K of the target method: the fewest target positives with recall_target**K <= alpha."""
    alpha = 1.0 - confidence
    k = math.ceil(math.log(alpha) / math.log(recall_target) - 1e-12)
    return k + 1 if recall_target ** k > alpha else k


def qbcb_cutoff(*, positives: int, recall_target: float, confidence: float) -> int | None:
    """The least j with P(Binomial(positives, target) >= j) <= alpha; None if no j <= r will do.

    binom.sf(j - 1, r, tau) is P(X >= j); it falls as j grows, so the first j that passes is
    the least.
    """
    from scipy.stats import binom  # a second of imports, paid only where a stop is tested

    alpha = 1.0 - confidence
    for j in range(1, positives + 1):
        if binom.sf(j - 1, positives, recall_target) <= alpha:
            return j
    return None


def qbcb_claimable_recall(*, positives: int, reached: int, confidence: float) -> float:
    """The recall claimed with `confidence` once the ranked phase has reached `reached` of the
    target set's `positives`: the alpha-quantile of the reached-th order statistic of r
    uniforms, Beta(j, r - j + 1). 0.0 before any target positive is reached."""
    if reached <= 0 or positives <= 0:
        return 0.0
    from scipy.stats import beta

    return float(beta.ppf(1.0 - confidence, reached, positives - reached + 1))


@dataclass(frozen=True)
class TargetState:
    """Where a target-set rule stands for one label: what the page and the API show."""

    rule: str
    target_size: int
    positives: int
    reached: int
    cutoff: int | None
    can_stop: bool
    claimable_recall: float


def target_state(*, rule: str, target_size: int, positives: int, reached: int,
                 recall_target: float, confidence: float) -> TargetState:
    cutoff = qbcb_cutoff(positives=positives, recall_target=recall_target,
                         confidence=confidence)
    if rule == "target":  # the target method always waits for every target positive
        needed = target_positives_needed(recall_target=recall_target, confidence=confidence)
        cutoff = positives if positives >= needed else None
    return TargetState(
        rule=rule, target_size=target_size, positives=positives, reached=reached, cutoff=cutoff,
        can_stop=cutoff is not None and reached >= cutoff,
        claimable_recall=qbcb_claimable_recall(positives=positives, reached=reached,
                                               confidence=confidence))
