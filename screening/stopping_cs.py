"""A stopping rule from a confidence sequence for the relevant records left: pure Python, no Django.

Waudby-Smith, I. & Ramdas, A. (2020). Confidence sequences for sampling without replacement.
NeurIPS 2020, arXiv:2006.04347, section 3: the prior-posterior-ratio (PPR) martingale for a
finite urn of 0s and 1s (their code: ``BBHG_confseq``, ``DMHG_martingale``).

Setting. After the ranked phase the reviewer switches and draws records uniformly at random,
without replacement, from the ``pool`` records still unread; K of them are relevant (unknown,
fixed at the switch). After n draws with k relevant:

* Prior: K ~ BetaBinomial(pool, a, b), fixed before the first draw (it may use anything the
  ranked phase showed: the switch and the prior depend on the ranked phase only).
* Posterior: K - k ~ BetaBinomial(pool - n, a + k, b + n - k) (the draws of a uniform sample
  from an urn whose count is BetaBinomial are exchangeable Beta-Bernoulli).
* M_n(K) = prior(K) / posterior_n(K) is, for the true K, a nonnegative martingale with
  M_0 = 1 (the paper's Proposition 3.1; in likelihood terms it is the Beta-Binomial mixture
  over the sequence's likelihood under K). Ville's inequality: P(exists n: M_n(K) >= 1/alpha)
  <= alpha, so C_n = {K : M_n(K) < 1/alpha} holds the true K at every n at once, with
  probability at least 1 - alpha, and so does the running intersection of the C_n.

The rule. U_n = the largest K in the running intersection (never above pool - (n - k), the
records not known to be irrelevant). With r_AL relevant found in the ranked phase and k in the
sample, found = r_AL + k, recall = found / (found + K - k) >= found / (found + U_n - k). Stop
at the first n with found / (found + U_n - k) >= target. Because the CS is valid at all n at
once, any stopping time (this one, or the reviewer giving up early) keeps "recall >= target"
with probability at least 1 - alpha; no alpha needs to be spent over looks.

Assumptions (``ASSUMPTIONS``, shown with the rule): the sample after the switch is uniform and
without replacement over every record unread at the switch, and each drawn record is read;
decisions are correct; the switch and the prior depend on the ranked phase only, not on the
sample. The prior changes how soon the rule stops, never its validity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

TEST_NAME = ("Waudby-Smith & Ramdas (2020) prior-posterior-ratio confidence sequence for "
             "sampling without replacement, NeurIPS 2020, arXiv:2006.04347")
ASSUMPTIONS = (
    "After the switch, records are read uniformly at random, without replacement, from those "
    "not yet read, and every one drawn is read.",
    "Decisions are correct: a relevant record read is recognised as relevant.",
    "The switch, and the prior the confidence sequence starts from, depend on the ranked phase "
    "only; the bound holds at every record read, so the stop may come at any look.",
)
# The prior's mean is PRIOR_SHRINK times the ranked phase's yield over its last PRIOR_RECENT
# records: the pool is everything the ranker put below those records, so it is leaner than
# they were (on the digestive label at its switch, 0.25% against 1 to 3%). a = 1 keeps the
# prior's density highest near no relevant left. A quarter stopped sooner than the yield
# itself on eight of nine corpora in simulation, 20 seeds each (docs/screening.md, "The prior's
# mean"); a tenth was no better. The prior moves the stop only: the bound holds whatever it is.
PRIOR_RECENT = 100
PRIOR_SHRINK = 0.25
PRIOR_A = 1.0
# The switch the simulation's reviewer makes under this rule (issue 36): once the ranked
# phase's yield over its last SWITCH_WINDOW records, spread over every record still unread,
# would leave at most SWITCH_MARGIN times the relevant records the target lets go unfound.
# The bound tolerates found * (1 - target) / target unfound, so a label whose relevant records
# are common can switch while the ranked order still finds some, and a rare one later than a
# fixed run of irrelevant records would. Any switch that reads the ranked phase only keeps the
# guarantee; this one moves the stop only.
SWITCH_WINDOW = 200
SWITCH_MARGIN = 2.0
# the ranked decisions a session hands over: enough for the prior and the switch
RECENT = max(PRIOR_RECENT, SWITCH_WINDOW)


def _log_beta(x: float, y: float) -> float:
    return math.lgamma(x) + math.lgamma(y) - math.lgamma(x + y)


def _log_beta_binomial(x: int, n: int, a: float, b: float) -> float:
    """log P(X = x) for X ~ BetaBinomial(n, a, b); -inf outside 0..n."""
    if x < 0 or x > n:
        return -math.inf
    log_choose = math.lgamma(n + 1) - math.lgamma(x + 1) - math.lgamma(n - x + 1)
    return log_choose + _log_beta(x + a, n - x + b) - _log_beta(a, b)


def log_martingale(*, pool: int, sampled: int, k: int, big_k: int, prior_a: float,
                   prior_b: float) -> float:
    """log M_n(K): the prior's log-probability of K minus the posterior's; +inf where the
    sample rules K out (fewer relevant than found, or more than the records left could hold)."""
    if big_k < k or big_k - k > pool - sampled:
        return math.inf
    prior = _log_beta_binomial(big_k, pool, prior_a, prior_b)
    posterior = _log_beta_binomial(big_k - k, pool - sampled, prior_a + k,
                                   prior_b + sampled - k)
    return prior - posterior


def prior_from_ranked(*, recent: list[int]) -> tuple[float, float]:
    """Beta(a, b) with a = PRIOR_A and mean PRIOR_SHRINK * (yes + 1) / (read + 2) over the
    ranked phase's last PRIOR_RECENT decisions (`recent`: 0/1, oldest first)."""
    tail = recent[-PRIOR_RECENT:]
    mean = PRIOR_SHRINK * (sum(tail) + 1.0) / (len(tail) + 2.0)
    return PRIOR_A, PRIOR_A * (1.0 - mean) / mean


def _switch_due(*, window_yes: int, found: int, unread: int, recall_target: float) -> bool:
    left = (window_yes + 1.0) / (SWITCH_WINDOW + 2.0) * unread
    return left <= SWITCH_MARGIN * found * (1.0 - recall_target) / recall_target


def switch_due(*, recent: list[int], found: int, unread: int, recall_target: float) -> bool:
    """Whether the switch is due now (see SWITCH_WINDOW): `recent`, the ranked phase's last
    decisions (0/1, oldest first); `found`, the relevant records it found; `unread`, the
    records not read yet. Not before SWITCH_WINDOW records have been read."""
    if len(recent) < SWITCH_WINDOW:
        return False
    return _switch_due(window_yes=sum(recent[-SWITCH_WINDOW:]), found=found, unread=unread,
                       recall_target=recall_target)


def switch_index(*, ranked: list[int], total: int, recall_target: float) -> int | None:
    """The number of records read in ranked order when switch_due first holds, or None if it
    does not within `ranked` (0/1 decisions in the order read, cold start included, out of
    `total` records): switch_due at every prefix, with running sums."""
    found = window_yes = 0
    for read, relevant in enumerate(ranked, start=1):
        found += relevant
        window_yes += relevant - (ranked[read - 1 - SWITCH_WINDOW] if read > SWITCH_WINDOW
                                  else 0)
        if read >= SWITCH_WINDOW and _switch_due(window_yes=window_yes, found=found,
                                                 unread=total - read,
                                                 recall_target=recall_target):
            return read
    return None


def recall_lower_bound(*, found: int, left_upper: int) -> float:
    """found / (found + U - k): the recall claimed when at most `left_upper` are left."""
    if found + left_upper <= 0:
        return 0.0
    return found / (found + left_upper)


@dataclass
class PoolBound:
    """The confidence sequence over one random sample, updated record by record.

    ``upper`` is the running intersection's largest K: scanned down from the last one, since
    K above it was already excluded once (and stays out of the intersection).
    """

    pool: int
    r_al: int
    alpha: float
    prior_a: float
    prior_b: float
    sampled: int = 0
    k: int = 0
    upper: int = field(default=-1)

    def __post_init__(self) -> None:
        if self.upper < 0:
            self.upper = self.pool

    def observe(self, *, relevant: bool) -> None:
        self.sampled += 1
        self.k += int(relevant)
        threshold = math.log(1.0 / self.alpha)
        candidate = min(self.upper, self.pool - (self.sampled - self.k))
        while candidate > self.k and log_martingale(
                pool=self.pool, sampled=self.sampled, k=self.k, big_k=candidate,
                prior_a=self.prior_a, prior_b=self.prior_b) >= threshold:
            candidate -= 1
        self.upper = max(candidate, self.k)

    @property
    def left_upper(self) -> int:
        """At most this many relevant records are left unread (confidence 1 - alpha)."""
        return self.upper - self.k

    @property
    def found(self) -> int:
        return self.r_al + self.k

    def claimable_recall(self) -> float:
        return recall_lower_bound(found=self.found, left_upper=self.left_upper)

    def can_stop(self, *, recall_target: float) -> bool:
        return self.found > 0 and self.claimable_recall() >= recall_target
