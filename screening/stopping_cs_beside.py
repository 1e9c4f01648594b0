"""The ``confseq`` bound with ranked reading going on beside the random sample: pure Python.

At the switch the pool (every record unread) is fixed and put in a random order; the sample
reads that order from its start, and screening.stopping_cs.PoolBound bounds K, the pool's
relevant records, from it, valid at every draw at once (Ville's inequality). Beside the
sample the reviewer may go on reading pool records in ranked order. Those reads change nothing
in the sample's order or in the bound on K (K is fixed at the switch), so the bound holds
whatever the ranked reading does, and two facts sharpen what it says:

* a drawn record already read in ranked order costs nothing (its decision is known);
* the relevant records of the pool read by either means, ``known_relevant``, are found, and
  the pool's records known to be irrelevant cannot be relevant, so
  unfound = K - known_relevant <= min(U_n, pool - known_irrelevant) - known_relevant.

The claim is recall >= found / (found + that bound), found = r_al + known_relevant. Where the
switch leaves relevant records in the pool, the ranked order finds them far sooner than the
sample would, and the bound need only shrink to K, not to the few the sample has drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from screening import stopping_cs

TEST_NAME = (stopping_cs.TEST_NAME + "; ranked reading beside the sample counts as found "
             "(screening.stopping_cs_beside)")
ASSUMPTIONS = (
    "After the switch, the records not yet read are put in a random order and the sample reads "
    "them in that order, every one drawn read; records may also be read in ranked order beside "
    "it, and a drawn record already read costs nothing.",
    "Decisions are correct: a relevant record read is recognised as relevant.",
    "The switch, and the prior the confidence sequence starts from, depend on the ranked phase "
    "only; the bound holds at every record read, so the stop may come at any look.",
)
# The ranked reading beside the sample ends after this many irrelevant ranked records in a
# row (docs/figures/stopping.md); any rule for it keeps the guarantee, it moves the stop only.
BESIDE_RUN = 20


@dataclass
class BesideBound:
    """The sample's bound (``bound``) and what is known of the pool by any means."""

    bound: stopping_cs.PoolBound
    known: dict[int, bool] = field(default_factory=dict)

    @property
    def known_relevant(self) -> int:
        return sum(self.known.values())

    def ranked_read(self, *, record: int, relevant: bool) -> bool:
        """A pool record read in ranked order; False where it was known (no reading)."""
        if record in self.known:
            return False
        self.known[record] = relevant
        return True

    def draw(self, *, record: int, relevant: bool) -> bool:
        """The sample's next record; False where it was known already (no reading)."""
        self.bound.observe(relevant=relevant)
        return self.ranked_read(record=record, relevant=relevant)

    @property
    def left_upper(self) -> int:
        """At most this many relevant records of the pool are unread (confidence 1 - alpha)."""
        irrelevant = len(self.known) - self.known_relevant
        total = min(self.bound.upper, self.bound.pool - irrelevant)
        return max(0, total - self.known_relevant)

    @property
    def found(self) -> int:
        return self.bound.r_al + self.known_relevant

    def claimable_recall(self) -> float:
        return stopping_cs.recall_lower_bound(found=self.found, left_upper=self.left_upper)

    def can_stop(self, *, recall_target: float) -> bool:
        return self.found > 0 and self.claimable_recall() >= recall_target
