"""What the stopping panel says in plain words, read through one small interface any rule feeds.

Pure Python, no Django. A rule registers a factory in LOOKS: given where a label stands (a
Standing: the pool, the random draws so far, the relevant records found before the sample,
the ranked phase's last decisions) and a target and confidence, it returns a Look that takes
further random records one at a time (`observe`) and says whether the rule would stop
(`can_stop`). From that alone the panel forecasts how many more records the stop needs if
the yield stays as it is (with the range its 95% interval gives), and what the team would
read under other targets and confidences. A new rule (screening/stopping_<name>.py) adds its
factory here and the panel shows it.

The forecasts are estimates, never the stop: the stop is the rule's own test. The heuristic
stops (a run of irrelevant records, Cormack & Grossman's knee) carry no guarantee at all.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from screening import stopping, stopping_cs

# Beyond this many more records a forecast says "more than"; the walk stays cheap on a poll.
FORECAST_MAX = 2000
OTHER_TARGETS = ((0.95, 0.95), (0.95, 0.90), (0.90, 0.95))
RUN_IRRELEVANT = 50
# Cormack & Grossman (2016): stop once the slope ratio at the knee is at least 156 and at
# least 150 records have been read.
KNEE_RATIO, KNEE_MIN_READ = 156.0, 150


@dataclass(frozen=True)
class Standing:
    pool: int
    draws: list[bool] = field(default_factory=list)
    r_al: int = 0
    ranked_recent: list[int] = field(default_factory=list)


class Look(Protocol):
    def observe(self, *, relevant: bool) -> None: ...

    def can_stop(self) -> bool: ...


class _ConfseqLook:
    def __init__(self, standing: Standing, recall_target: float, confidence: float) -> None:
        prior_a, prior_b = stopping_cs.prior_from_ranked(recent=standing.ranked_recent)
        self.bound = stopping_cs.PoolBound(pool=standing.pool, r_al=standing.r_al,
                                           alpha=1.0 - confidence, prior_a=prior_a,
                                           prior_b=prior_b)
        self.target = recall_target
        for relevant in standing.draws:
            self.bound.observe(relevant=relevant)

    def observe(self, *, relevant: bool) -> None:
        self.bound.observe(relevant=relevant)

    def can_stop(self) -> bool:
        return self.bound.can_stop(recall_target=self.target)


class _CallaghanLook:
    def __init__(self, standing: Standing, recall_target: float, confidence: float,
                 spent: bool = False) -> None:
        self.pool, self.r_al, self.target = standing.pool, standing.r_al, recall_target
        self.sampled, self.k = len(standing.draws), sum(standing.draws)
        self.alpha, self.spent = 1.0 - confidence, spent

    def observe(self, *, relevant: bool) -> None:
        self.sampled += 1
        self.k += int(relevant)

    def can_stop(self) -> bool:
        alpha = stopping.alpha_spent(alpha=self.alpha, k=self.k) if self.spent else self.alpha
        return stopping.p_value(pool=self.pool, sampled=self.sampled, k=self.k, r_al=self.r_al,
                                recall_target=self.target) < alpha


LOOKS: dict[str, Callable[[Standing, float, float], Look]] = {
    "confseq": _ConfseqLook,
    "callaghan": _CallaghanLook,
    "callaghan_spent": lambda s, t, c: _CallaghanLook(s, t, c, spent=True),
}


def records_to_stop(*, rule: str, standing: Standing, recall_target: float,
                    confidence: float, rate: float) -> int | None:
    """More random records until the rule stops, if a share `rate` of them is relevant
    (spread evenly); None if not within FORECAST_MAX or the pool. Checked at every record
    for the first 64, then every 1/32 of the way: "about" is exact to about 3%. The page
    polls while nothing changed, so the answers are remembered."""
    return _records_to_stop(rule, standing.pool, tuple(standing.draws), standing.r_al,
                            tuple(standing.ranked_recent), recall_target, confidence,
                            round(rate, 6))


@functools.lru_cache(maxsize=512)
def _records_to_stop(rule: str, pool: int, draws: tuple[bool, ...], r_al: int,
                     ranked_recent: tuple[int, ...], recall_target: float, confidence: float,
                     rate: float) -> int | None:
    standing = Standing(pool=pool, draws=list(draws), r_al=r_al,
                        ranked_recent=list(ranked_recent))
    look = LOOKS.get(rule, _ConfseqLook)(standing, recall_target, confidence)
    if look.can_stop():
        return 0
    left = min(standing.pool - len(standing.draws), FORECAST_MAX)
    carry, check = 0.0, 1
    for more in range(1, left + 1):
        carry += rate
        look.observe(relevant=carry >= 1.0)
        carry -= 1.0 if carry >= 1.0 else 0.0
        if more >= check or more == left:
            if look.can_stop():
                return more
            check = more + max(1, more // 32)
    return None


def wilson(*, k: int, n: int, z: float = 1.96) -> tuple[float, float, float]:
    """The share k / n with its Wilson 95% interval; (0, 0, 1) with nothing read."""
    if n <= 0:
        return 0.0, 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return p, max(0.0, centre - half), min(1.0, centre + half)


def recall_now(*, found: int, unread: int, rate: tuple[float, float, float]
               ) -> tuple[float, float, float] | None:
    """Estimated recall, and its interval, if the unread records hold relevant ones at `rate`
    (its point, low, high); None before anything relevant was found."""
    if found <= 0:
        return None
    point, low, high = (found / (found + r * unread) for r in rate)
    return point, high, low  # a higher yield left unread is a lower recall


def run_of_irrelevant(*, ranked: list[int]) -> int:
    """Irrelevant records read in ranked order since the last relevant one."""
    run = 0
    for relevant in reversed(ranked):
        if relevant:
            break
        run += 1
    return run


def knee(*, ranked: list[int]) -> dict[str, float | int | bool] | None:
    """Cormack & Grossman's knee method on the gain curve of the ranked reads: the knee is the
    point farthest from the line through the origin and the last point; the slope ratio
    compares the yield before it with the yield after it (one relevant added after)."""
    read, found = len(ranked), sum(ranked)
    if read < 2 or found == 0:
        return None
    gain, best, at, gain_at = 0, -1.0, 1, 0
    for i, relevant in enumerate(ranked, start=1):
        gain += relevant
        distance = abs(found * i - read * gain) / math.hypot(found, read)
        if distance > best:
            best, at, gain_at = distance, i, gain
    after = max(1, read - at)
    ratio = (gain_at / at) / ((found - gain_at + 1) / after)
    return {"knee_at": at, "ratio": round(ratio, 1),
            "met": ratio >= KNEE_RATIO and read >= KNEE_MIN_READ}


def sample_draws(*, rows: list[tuple[dict, int | None, str]], label: str) -> list[bool]:
    """The random sample for `label` from (final, sample_order, done_phase) rows in the random
    order: the longest prefix whose records all have a final value (selectors.stopping_table
    says why)."""
    draws: list[bool] = []
    for final, order, phase in rows:
        if order is None:
            continue
        if final.get(label) not in ("yes", "no") or phase == "stop":
            break
        draws.append(final[label] == "yes")
    return draws
