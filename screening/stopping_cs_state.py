"""Where a session's label stands under the `confseq` rule: pure Python, no Django.

screening.stopping_cs holds the confidence sequence; this module replays a session's random
sample through it and states the result with the same keys as screening.stopping.StopState
(the page, the API, the export and the stop read those keys whatever the rule), plus the
bound itself (`left_upper`) and the prior it started from.

`p_value` here is the confidence sequence's own p-value at this look: the largest 1 / M_n(K)
over the K that would put recall below the target (1.0 where the sample cannot rule any out).
It is valid at any stopping time (Ville's inequality, K by K), and p < alpha implies the stop;
the stop itself uses the running intersection over every look, so a stop may stand while the
p-value at this look has risen back above alpha.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from screening import stopping_cs


def _p_value(bound: stopping_cs.PoolBound, *, recall_target: float) -> float:
    """max 1 / M_n(K) over the K with found / (found + K - k) < target, at this look."""
    if bound.sampled <= 0:
        return 1.0
    # recall < target exactly when K - k > found / target - found
    least = bound.k + math.floor(bound.found / recall_target - bound.found) + 1
    largest = bound.pool - (bound.sampled - bound.k)
    worst = math.inf
    for big_k in range(max(least, bound.k), largest + 1):
        worst = min(worst, stopping_cs.log_martingale(
            pool=bound.pool, sampled=bound.sampled, k=bound.k, big_k=big_k,
            prior_a=bound.prior_a, prior_b=bound.prior_b))
    return 0.0 if worst == math.inf else min(1.0, math.exp(-worst))


def _more_needed(bound: stopping_cs.PoolBound, *, recall_target: float) -> int:
    """Random records still to read for the stop if none of them is relevant (the rest of the
    pool when even that would not do)."""
    ahead = copy.copy(bound)
    extra = 0
    while not ahead.can_stop(recall_target=recall_target) and ahead.sampled < ahead.pool:
        ahead.observe(relevant=False)
        extra += 1
    return extra


def confseq_state(*, label: str, pool: int, draws: list[bool], r_al: int,
                  ranked_recent: list[int], recall_target: float,
                  confidence: float) -> dict[str, Any]:
    """The state of `confseq` for one label.

    `draws`: the random sample after the switch, in the order drawn (True: relevant);
    `ranked_recent`: the ranked phase's last stopping_cs.RECENT decisions for the label,
    oldest first (1: relevant), from which the prior is set as the simulation sets it
    (stopping_cs.prior_from_ranked), and, before the switch (`pool` then counts the records
    unread), whether the simulation's switch is due (stopping_cs.switch_due).
    """
    prior_a, prior_b = stopping_cs.prior_from_ranked(recent=ranked_recent)
    alpha = 1.0 - confidence
    bound = stopping_cs.PoolBound(pool=pool, r_al=r_al, alpha=alpha, prior_a=prior_a,
                                  prior_b=prior_b)
    for relevant in draws:
        bound.observe(relevant=relevant)
    return {
        "label": label, "pool": pool, "sampled": bound.sampled, "k": bound.k, "r_al": r_al,
        "r_seen": bound.found, "recall_target": recall_target, "confidence": confidence,
        "p_value": _p_value(bound, recall_target=recall_target),
        "can_stop": bound.can_stop(recall_target=recall_target),
        "claimable_recall": bound.claimable_recall(),
        "more_needed": _more_needed(bound, recall_target=recall_target),
        "left_upper": bound.left_upper, "prior_a": prior_a, "prior_b": prior_b,
        # before the switch: whether the switch the simulation models is due (pool: unread)
        "switch_due": not draws and stopping_cs.switch_due(
            recent=ranked_recent, found=r_al, unread=pool, recall_target=recall_target),
        # the export's justification names the bound the stop rested on
        "test": (f"{stopping_cs.TEST_NAME}; at most {bound.left_upper} relevant record(s) "
                 f"left unread (confidence {confidence}), prior Beta({prior_a:g}, "
                 f"{prior_b:.4g})"),
    }
