"""How a search scores a trial and decides whether tuning beat the defaults.

Cheap candidates (TF-IDF and embedding heads) are scored by k-fold cross-validation on train and
validation together: one small validation split let a search of 190 trials of C pick the luckiest
(0.705 on validation, 0.534 on test). The folds are the same for every trial of a search (the
seed fixes them), so two trials' fold scores are a paired comparison.

A tuned winner is kept only when it beats the best untuned default by more than the noise:
NOISE_Z standard errors of the paired fold differences when both were cross-validated, else one
standard error of a score on the validation split. Otherwise the default is kept, and the
search's verdict says so.
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


def folds(data: TextData, *, seed: int, k: int = CV_FOLDS) -> list[tuple[list[int], list[int]]]:
    """k (fit rows, scored rows) pairs, stratified by each row's rarest label; [] when a label
    has too few rows for two folds (the validation split scores instead).

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
    for i in labelled:
        rarest = min(data.labels[i], key=lambda label: (counts[label], label))
        groups.setdefault(rarest, []).append(i)
    assignment: dict[int, int] = {}
    turn = 0
    for label in sorted(groups, key=lambda name: (counts[name], name)):
        rows = groups[label]
        rng.shuffle(rows)
        for i in rows:
            assignment[i] = turn % k
            turn += 1
    return [([i for i in labelled if assignment[i] != f],
             [i for i in labelled if assignment[i] == f]) for f in range(k)]


@dataclass(frozen=True)
class Scored:
    """A finished trial as the verdict compares it: its score, and its fold scores if any."""

    number: int
    model_type: str
    value: float
    fold_scores: tuple[float, ...] = ()


def noise(winner: Scored, default: Scored, *, val_rows: int) -> tuple[float, str]:
    """How much the winner must beat the default by, and what that noise is, in words."""
    if (winner.fold_scores and len(winner.fold_scores) == len(default.fold_scores)
            and len(winner.fold_scores) >= 2):
        diffs = [a - b for a, b in zip(winner.fold_scores, default.fold_scores, strict=True)]
        error = statistics.stdev(diffs) / math.sqrt(len(diffs))
        return NOISE_Z * error, (f"{NOISE_Z:g} standard errors of the paired differences over "
                                 f"{len(diffs)} cross-validation folds")
    p = min(max(default.value, 0.0), 1.0)
    error = math.sqrt(p * (1 - p) / max(1, val_rows))
    return error, f"one standard error of a score on {val_rows} validation rows"


def verdict(winner: Scored, default: Scored, *, val_rows: int) -> tuple[bool, str]:
    """(keep the winner?, the sentence saying why) for a tuned winner against the best
    untuned default."""
    if winner.number == default.number:
        return True, (f"The winner is {winner.model_type} at its usual settings "
                      f"(macro-F1 {winner.value:.3f}): no tuned trial beat it.")
    margin, words = noise(winner, default, val_rows=val_rows)
    gain = winner.value - default.value
    if gain > margin:
        return True, (f"The tuned {winner.model_type} (trial {winner.number}, macro-F1 "
                      f"{winner.value:.3f}) beat the best untuned default, {default.model_type} "
                      f"({default.value:.3f}), by {gain:.3f}: more than the noise ({margin:.3f}, "
                      f"{words}).")
    return False, (f"Kept the untuned default {default.model_type} (macro-F1 "
                   f"{default.value:.3f}): the best tuned trial, {winner.model_type} (trial "
                   f"{winner.number}, {winner.value:.3f}), beat it by {gain:.3f}, not more than "
                   f"the noise ({margin:.3f}, {words}).")
