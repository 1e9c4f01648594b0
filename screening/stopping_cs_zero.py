"""The confidence sequence of screening.stopping_cs with a prior that puts mass on "none left".

Pure Python, no Django. Same setting, same switch and same stop as ``confseq``: after the
switch, records are drawn uniformly at random without replacement from the ``pool`` records
unread; K of them are relevant. Only the prior differs:

    prior(K) = w * [K = 0] + (1 - w) * BetaBinomial(K; pool, a, b)

with w = ZERO_WEIGHT and (a, b) the ``confseq`` prior (stopping_cs.prior_from_ranked). For any
prior fixed before the first draw, M_n(K) = prior(K) / posterior_n(K) is a nonnegative
martingale with M_0 = 1 for the true K (Waudby-Smith & Ramdas 2020, Proposition 3.1), so
Ville's inequality keeps the true K inside {K : M_n(K) < 1/alpha} at every n at once with
probability at least 1 - alpha. Written with the likelihood L_n(K) of the draws seen,
M_n(K) = Z_n / L_n(K), Z_n = sum over K' of prior(K') L_n(K'):

* L_n(K) = [K]_k [pool - K]_(n - k) / [pool]_n (falling factorials: the probability of this
  ordered sequence of draws from an urn holding K relevant records);
* Z_n = w * [k = 0] + (1 - w) * B(a + k, b + n - k) / B(a, b) (an urn with no relevant record
  gives an all-irrelevant sequence with probability 1; the Beta-Binomial part is the
  Beta-Bernoulli marginal).

Why the point mass: at the end of a review the sample mostly finds nothing, and while it finds
nothing M_n(K) >= w / P(no relevant in n draws | K), the exact test's statistic: the bound
shrinks about as fast as a single hypergeometric test at level alpha * w would allow, where
the Beta-Binomial prior alone spreads its mass over small K and needs more draws. The price,
once a relevant record is drawn, is at most log(1 / (1 - w)) on the log scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from screening import stopping_cs

TEST_NAME = (stopping_cs.TEST_NAME + "; prior with mass on no relevant record left "
             "(screening.stopping_cs_zero)")
ASSUMPTIONS = stopping_cs.ASSUMPTIONS
# Chosen by simulation (docs/figures/stopping.md); any weight fixed before the first draw keeps
# the guarantee, the weight moves the stop only.
ZERO_WEIGHT = 0.5


def _log_falling(x: int, j: int) -> float:
    """log [x]_j = log x (x - 1) ... (x - j + 1); -inf where j > x."""
    if j > x:
        return -math.inf
    return math.lgamma(x + 1) - math.lgamma(x - j + 1)


def _log_beta(x: float, y: float) -> float:
    return math.lgamma(x) + math.lgamma(y) - math.lgamma(x + y)


def log_likelihood(*, pool: int, sampled: int, k: int, big_k: int) -> float:
    """log L_n(K): the log-probability of one ordered sequence of `sampled` draws holding `k`
    relevant records, from an urn of `pool` with `big_k` relevant."""
    return (_log_falling(big_k, k) + _log_falling(pool - big_k, sampled - k)
            - _log_falling(pool, sampled))


def log_evidence(*, sampled: int, k: int, zero_weight: float, prior_a: float,
                 prior_b: float) -> float:
    """log Z_n: the draws' probability averaged over the prior."""
    mixed = math.log1p(-zero_weight) + _log_beta(prior_a + k, prior_b + sampled - k) - _log_beta(
        prior_a, prior_b) if zero_weight < 1.0 else -math.inf
    if k > 0 or zero_weight <= 0.0:
        return mixed
    return float(max(mixed, math.log(zero_weight)) + math.log1p(
        math.exp(-abs(mixed - math.log(zero_weight)))))


def log_martingale(*, pool: int, sampled: int, k: int, big_k: int, prior_a: float,
                   prior_b: float, zero_weight: float = ZERO_WEIGHT) -> float:
    """log M_n(K) = log Z_n - log L_n(K); +inf where the draws rule K out."""
    if big_k < k or big_k - k > pool - sampled:
        return math.inf
    return log_evidence(sampled=sampled, k=k, zero_weight=zero_weight, prior_a=prior_a,
                        prior_b=prior_b) - log_likelihood(pool=pool, sampled=sampled, k=k,
                                                          big_k=big_k)


@dataclass
class ZeroPoolBound(stopping_cs.PoolBound):
    """stopping_cs.PoolBound with the prior above: the same running intersection and stop."""

    zero_weight: float = ZERO_WEIGHT

    def observe(self, *, relevant: bool) -> None:
        self.sampled += 1
        self.k += int(relevant)
        threshold = math.log(1.0 / self.alpha)
        candidate = min(self.upper, self.pool - (self.sampled - self.k))
        while candidate > self.k and log_martingale(
                pool=self.pool, sampled=self.sampled, k=self.k, big_k=candidate,
                prior_a=self.prior_a, prior_b=self.prior_b,
                zero_weight=self.zero_weight) >= threshold:
            candidate -= 1
        self.upper = max(candidate, self.k)
