"""How a search scores a trial and decides whether tuning beat the defaults.

Cheap candidates (TF-IDF and embedding heads) are scored by k-fold cross-validation on train and
validation together: one small validation split let a search of 190 trials of C pick the luckiest
(0.705 on validation, 0.534 on test). The folds are the same for every trial of a search (the
seed fixes them), so two trials' fold scores are a paired comparison.

Scores are compared only on rows they share (issue 39: a validation-only score of 0.628 once
beat cross-validated ones of 0.560 and 0.599). A search's transformers, and its first trial
when its folds did not fit the time, have a score on the validation split only; every kept
trial (the best and the default of each kind) also has one, from its model fitted on train.
So the winner and the default it must beat are chosen on cross-validation when every trial
compared has fold scores (the same folds: the seed fixes them), else on the validation split
(`common_basis`), and the noise is measured on that same basis: NOISE_Z standard errors of the
paired fold differences, or one standard error of a validation score. A tuned winner is kept
only when it beats the best untuned default by more than that noise; otherwise the default is
kept, and the search's verdict says so.
"""

from __future__ import annotations

import math
import random
import statistics
from collections import Counter
from dataclasses import dataclass

from .types import TextData

CV_FOLDS = 5
NOISE_Z = 2.0  # a gain must exceed two standard errors of the paired fold differences


def pooled(train: TextData, val: TextData) -> TextData:
    """Train and validation as one set of rows, for cross-validation."""
    return TextData(list(train.texts) + list(val.texts),
                    [list(r) for r in train.labels] + [list(r) for r in val.labels])


def folds(data: TextData, *, seed: int, k: int = CV_FOLDS,
          with_unlabelled: bool = False) -> list[tuple[list[int], list[int]]]:
    """k (fit rows, scored rows) pairs, stratified by each row's rarest label; [] when a label
    has too few rows for two folds (the validation split scores instead). `with_unlabelled`:
    the rows without a label are dealt too (a multi-label model that learns "none of these").

    Rows are dealt round-robin within their rarest label's group, so every label with at least
    k rows appears in every scored fold, and in every fit part too."""
    counts = Counter(label for row in data.labels for label in row)
    labelled = [i for i, row in enumerate(data.labels) if row]
    if not counts or len(labelled) < 2 * k:
        return []
    k = min(k, min(counts.values()))
    if k < 2:
        return []
    rng = random.Random(seed)
    groups: dict[str, list[int]] = {}
    # A multi-label row without a label ("none of these") is dealt too, in a group of its own
    # (""), last: every fold fits and scores some.
    rows_all = range(len(data)) if with_unlabelled else labelled
    for i in rows_all:
        row = data.labels[i]
        rarest = min(row, key=lambda label: (counts[label], label)) if row else ""
        groups.setdefault(rarest, []).append(i)
    assignment: dict[int, int] = {}
    turn = 0
    for label in sorted(groups, key=lambda name: (counts.get(name, len(data) + 1), name)):
        rows = groups[label]
        rng.shuffle(rows)
        for i in rows:
            assignment[i] = turn % k
            turn += 1
    return [([i for i in rows_all if assignment[i] != f],
             [i for i in rows_all if assignment[i] == f]) for f in range(k)]


CV, VALIDATION = "cross-validation", "validation split"


@dataclass(frozen=True)
class Scored:
    """A finished trial as the verdict compares it: its score (the mean of its fold scores when
    cross-validated, else its validation score), its fold scores if any, and `validation`, the
    score of its model fitted on train on the validation split, where it has one."""

    number: int
    model_type: str
    value: float
    fold_scores: tuple[float, ...] = ()
    validation: float | None = None

    def on(self, basis: str) -> float:
        """The trial's score on `basis` (CV or VALIDATION)."""
        if basis == CV or self.validation is None:
            # Without a recorded validation score, a trial without folds was scored on
            # validation; common_basis never asks a cross-validated one for what it lacks.
            return self.value
        return self.validation


def common_basis(trials: list[Scored]) -> str:
    """CV when every trial has fold scores over the same number of folds (the search's
    folds), else VALIDATION: the rows every kept trial was scored on. Cross-validation is
    preferred where all have it: five scores on every row rather than one on a fifth."""
    counts = {len(t.fold_scores) for t in trials}
    if len(counts) == 1 and min(counts) >= 2:
        return CV
    return VALIDATION


def most_promising(*, bests: dict[str, Scored], keys: list[str], trials: dict[str, int],
                   bonus: float) -> str:
    """Which of `keys` gets the next trial: its best score, on the basis every kind's best
    shares (common_basis), plus `bonus` / sqrt(1 + its trials), so a once-tried kind gets
    another look. Like with like (issue 39): a transformer scored on 200 validation rows once
    outbid cross-validated kinds whose own scores on those rows were higher, and took the
    rest of an 8-minute budget."""
    basis = common_basis(list(bests.values())) if bests else CV

    def promise(key: str) -> float:
        score = bests[key].on(basis) if key in bests else 0.0
        return score + bonus / math.sqrt(1 + trials.get(key, 0))

    return max(keys, key=promise)


def basis_words(basis: str, *, folds: int = 0, val_rows: int = 0) -> str:
    if basis == CV:
        return f"cross-validated macro-F1 over the same {folds} folds"
    return f"macro-F1 on the {val_rows} rows of the validation split"


def noise(winner: Scored, default: Scored, *, val_rows: int,
          basis: str | None = None) -> tuple[float, str]:
    """How much the winner must beat the default by on `basis` (their common basis when not
    given), and what that noise is, in words: the fold noise only for fold scores."""
    basis = basis or common_basis([winner, default])
    if basis == CV:
        diffs = [a - b for a, b in zip(winner.fold_scores, default.fold_scores, strict=True)]
        error = statistics.stdev(diffs) / math.sqrt(len(diffs))
        return NOISE_Z * error, (f"{NOISE_Z:g} standard errors of the paired differences over "
                                 f"{len(diffs)} cross-validation folds")
    p = min(max(default.on(VALIDATION), 0.0), 1.0)
    error = math.sqrt(p * (1 - p) / max(1, val_rows))
    return error, f"one standard error of a score on {val_rows} validation rows"


def verdict(winner: Scored, default: Scored, *, val_rows: int,
            basis: str | None = None) -> tuple[bool, str]:
    """(keep the winner?, the sentence saying why) for a tuned winner against the best
    untuned default, both scored on `basis` (their common basis when not given)."""
    basis = basis or common_basis([winner, default])
    if winner.number == default.number:
        return True, (f"The winner is {winner.model_type} at its usual settings "
                      f"(macro-F1 {winner.on(basis):.3f}): no tuned trial beat it.")
    margin, words = noise(winner, default, val_rows=val_rows, basis=basis)
    won, base = winner.on(basis), default.on(basis)
    gain = won - base
    if gain > margin:
        return True, (f"The tuned {winner.model_type} (trial {winner.number}, macro-F1 "
                      f"{won:.3f}) beat the best untuned default, {default.model_type} "
                      f"({base:.3f}), by {gain:.3f}: more than the noise ({margin:.3f}, "
                      f"{words}).")
    return False, (f"Kept the untuned default {default.model_type} (macro-F1 "
                   f"{base:.3f}): the best tuned trial, {winner.model_type} (trial "
                   f"{winner.number}, {won:.3f}), beat it by {gain:.3f}, not more than "
                   f"the noise ({margin:.3f}, {words}).")


@dataclass(frozen=True)
class Choice:
    """The trial a search keeps, the basis every compared score was on, and why, in words."""

    trial: Scored
    basis: str
    verdict: str


def expected_maximum(m: int) -> float:
    """E[max of m independent standard normals]: how many standard errors the best of m
    equally good trials leads by on the same rows, by chance alone (0 for one trial)."""
    if m <= 1:
        return 0.0
    normal = statistics.NormalDist()
    step, total = 0.01, 0.0
    for i in range(-800, 801):  # the integral of x m phi(x) Phi(x)^(m-1) over [-8, 8]
        x = i * step
        total += x * m * normal.pdf(x) * normal.cdf(x) ** (m - 1) * step
    return total


def choose(kept: list[Scored], defaults: list[Scored], *, val_rows: int,
           challengers: int = 1) -> Choice:
    """The best of `kept` (the best and the default trial of each kind), if it beats the best
    of `defaults` by more than the noise, else that default: every score on one basis, so a
    trial scored on other rows never decides the winner.

    Where some trials were cross-validated and others scored on the validation split only (a
    transformer), the cross-validated ones choose their champion on their folds first, and a
    validation-only trial replaces it only by beating it on the validation rows by more than
    their noise: choosing among many trials on 200 validation rows picked the luckiest (issue
    39: a tuned head at 0.699 there scored 0.564 on held-out rows, below the untuned 0.580).

    `challengers`: the validation-only trials the challenger is the best of. Its lead must
    exceed one standard error plus the lead the best of that many equally good trials shows by
    chance (expected_maximum): a 20-minute search's best of 8 fine-tuned MiniLM trials led the
    champion by 0.080 on 200 rows and trailed it on 888 held-out ones (0.599 against 0.604)."""
    folded = {t.number for t in [*kept, *defaults] if len(t.fold_scores) >= 2}
    if folded and len(folded) < len({t.number for t in [*kept, *defaults]}):
        return _challenged(kept, defaults, folded, val_rows=val_rows, challengers=challengers)
    return _choose_on_common_basis(kept, defaults, val_rows=val_rows)


def _challenged(kept: list[Scored], defaults: list[Scored], folded: set[int], *,
                val_rows: int, challengers: int) -> Choice:
    """The cross-validated champion, challenged on validation by the validation-only trials."""
    cv_kept = [t for t in kept if t.number in folded]
    cv_defaults = [t for t in defaults if t.number in folded]
    first = _choose_on_common_basis(cv_kept or cv_defaults, cv_defaults, val_rows=val_rows)
    others = list({t.number: t for t in [*kept, *defaults] if t.number not in folded}.values())
    challenger = max(others, key=lambda t: (t.on(VALIDATION), -t.number))
    champion = first.trial
    mine, theirs = champion.on(VALIDATION), challenger.on(VALIDATION)
    error, _ = noise(challenger, champion, val_rows=val_rows, basis=VALIDATION)
    m = max(1, challengers, len(others))
    luck = expected_maximum(m)
    margin = error * (1.0 + luck)
    how = ("one standard error" if m == 1 else
           f"one standard error, plus {luck:.2f} for the best of {m} trials scored there")
    words = (f"{challenger.model_type} (trial {challenger.number}), scored on the "
             f"{val_rows} validation rows only ({theirs:.3f}), against {mine:.3f} for "
             f"{champion.model_type} there")
    if theirs - mine > margin:
        return Choice(challenger, VALIDATION, first.verdict + (
            f" Then {words}: ahead by more than the noise ({margin:.3f}, {how}), "
            f"so {challenger.model_type} is the model."))
    return Choice(champion, first.basis, first.verdict + (
        f" Then {words}: not ahead by more than the noise ({margin:.3f}, {how}), so the "
        "cross-validated choice stands."))


def _choose_on_common_basis(kept: list[Scored], defaults: list[Scored], *,
                            val_rows: int) -> Choice:
    everyone = list({t.number: t for t in [*kept, *defaults]}.values())
    basis = common_basis(everyone)

    def rank(t: Scored) -> tuple[float, int]:
        return t.on(basis), -t.number  # on a tie, the earlier trial

    top = max(everyone, key=rank)
    if not defaults:
        return Choice(top, basis, "")
    base = max(defaults, key=rank)
    keep, sentence = verdict(top, base, val_rows=val_rows, basis=basis)
    folds = len(top.fold_scores)
    sentence += (f" Every score compared: {basis_words(basis, folds=folds, val_rows=val_rows)}"
                 + ("." if basis == CV else ", the rows every compared trial was scored on."))
    return Choice(top if keep else base, basis, sentence)
