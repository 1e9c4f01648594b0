"""A stopping rule with a recall guarantee: pure Python and scipy, no Django.

Callaghan, M. W. & Müller-Hansen, F. (2020). Statistical stopping criteria for automated
screening in systematic reviews. Systematic Reviews 9:273. doi:10.1186/s13643-020-01521-4.
The formula is the one of their reference implementation, the R package ``buscar``
(``k_h0``: K = floor(r_seen / tau - r_AL + 1), and ``calculate_h0``'s ``phyper``).

After the ranked phase, records are drawn uniformly at random, without replacement, from the
``pool`` records that were still unscreened when sampling began. With r_AL relevant found
before sampling, k relevant among the n sampled, and r = r_AL + k found in all:

* H0: recall < tau. It holds exactly when the pool held at least
  K_tar = floor(r / tau - r_AL + 1) relevant records.
* Under H0 at its boundary, k is hypergeometric (pool, K_tar, n); the p-value is
  P(X <= k) = hypergeom.cdf(k, pool, K_tar, n). A larger K only makes P(X <= k) smaller,
  so the boundary is the worst case.
* Stop when p < 1 - confidence.

buscar's ``calculate_h0`` also tries every possible start of the sample (it is written for
orders whose random part is not recorded); here the start is known (the reviewer switched), so
the single test of the paper applies, which is also the one that holds without assumptions.

Looking after every record. The paper tests after each record drawn and stops at the first
p < alpha. That is one test at a level alpha only while no relevant record turns up (k stays 0,
the looks are nested); once k grows, each new k is a fresh chance to cross, and in simulation
(issue 36: 2 of 20 runs on a demo label stopped at recall 0.91 and 0.95-) the misses exceed
alpha. ``alpha_spent`` makes the looks valid: the stop at k relevant found in the sample is
tested at alpha_k = alpha * 6 / (pi^2 (k + 1)^2), which sum to alpha. For a fixed k, p falls as
n grows, so all the looks with that k reject only if the first n where p < alpha_k does, an
event of probability below alpha_k when recall < target; the union over k is below alpha.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any


def _hypergeom_cdf(k: int, pool: int, big_k: int, sampled: int) -> float:
    # scipy.stats costs about a second of CPU to import, and every web process, worker and
    # manage.py command loads this module (the screening URLs and tasks); few test a stop.
    from scipy.stats import hypergeom

    return float(hypergeom.cdf(k, pool, big_k, sampled))


TEST_NAME = "Callaghan & Müller-Hansen (2020) hypergeometric test, doi:10.1186/s13643-020-01521-4"


def k_target(*, r_al: int, r_seen: int, recall_target: float) -> int:
    """The fewest relevant records the pool must have held for recall to be below the target."""
    return math.floor(r_seen / recall_target - r_al + 1)


def alpha_spent(*, alpha: float, k: int) -> float:
    """The level the stop is tested at once k relevant records turned up in the sample."""
    return alpha * 6.0 / (math.pi ** 2 * (k + 1) ** 2)


def p_value(*, pool: int, sampled: int, k: int, r_al: int, recall_target: float) -> float:
    """The p-value of H0 "recall < recall_target" (1.0 before anything was sampled)."""
    if sampled <= 0 or pool <= 0:
        return 1.0
    big_k = k_target(r_al=r_al, r_seen=r_al + k, recall_target=recall_target)
    if big_k > pool:
        return 0.0  # the pool is too small to hide that many: H0 is impossible
    return _hypergeom_cdf(k, pool, big_k, sampled)


def claimable_recall(*, pool: int, sampled: int, k: int, r_al: int, alpha: float) -> float:
    """The largest recall that can be claimed now with H0 rejected at `alpha` (0.0 if none).

    p falls as K grows, so find the least K with p < alpha (bisection); every target tau with
    K_tar(tau) >= that K is rejected, i.e. tau <= r / (r_AL + K - 1).
    """
    r_seen = r_al + k
    if sampled <= 0 or pool <= 0 or r_seen == 0:
        return 0.0
    low, high = k + 1, pool + 1  # K = pool + 1 is "impossible", p = 0
    while low < high:
        mid = (low + high) // 2
        p = 0.0 if mid > pool else _hypergeom_cdf(k, pool, mid, sampled)
        if p < alpha:
            high = mid
        else:
            low = mid + 1
    return min(1.0, r_seen / (r_al + low - 1))


def more_needed(*, pool: int, sampled: int, k: int, r_al: int, recall_target: float,
                alpha: float) -> int:
    """How many more random records to read to claim the target, if none of them is relevant."""
    remaining = max(0, pool - sampled)

    def rejects(extra: int) -> bool:
        return p_value(pool=pool, sampled=sampled + extra, k=k, r_al=r_al,
                       recall_target=recall_target) < alpha

    if rejects(0):
        return 0
    low, high = 1, remaining
    if not rejects(high):
        return remaining
    while low < high:
        mid = (low + high) // 2
        if rejects(mid):
            high = mid
        else:
            low = mid + 1
    return low


@dataclass(frozen=True)
class StopState:
    """Where one label stands: the figures the page, the API and the export show."""

    label: str
    pool: int
    sampled: int
    k: int
    r_al: int
    r_seen: int
    recall_target: float
    confidence: float
    p_value: float
    can_stop: bool
    claimable_recall: float
    more_needed: int
    test: str = TEST_NAME

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def stop_state(*, label: str, pool: int, sampled: int, k: int, r_al: int,
               recall_target: float, confidence: float, spent: bool = False) -> StopState:
    """The state of the test; `spent`: test at alpha_spent(k) (every look valid), else alpha."""
    alpha = alpha_spent(alpha=1.0 - confidence, k=k) if spent else 1.0 - confidence
    p = p_value(pool=pool, sampled=sampled, k=k, r_al=r_al, recall_target=recall_target)
    return StopState(
        label=label, pool=pool, sampled=sampled, k=k, r_al=r_al, r_seen=r_al + k,
        recall_target=recall_target, confidence=confidence, p_value=p, can_stop=p < alpha,
        claimable_recall=claimable_recall(pool=pool, sampled=sampled, k=k, r_al=r_al,
                                          alpha=alpha),
        more_needed=more_needed(pool=pool, sampled=sampled, k=k, r_al=r_al,
                                recall_target=recall_target, alpha=alpha),
        # the export's justification names the level the stop was tested at
        test=TEST_NAME + (f", alpha spent: {alpha:.5f} at k={k}" if spent else ""),
    )
