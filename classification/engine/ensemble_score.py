"""Whether a search's ensemble beats its winner, judged out of fold: on the rows of the search's
cross-validation folds when every member was scored on them, else on the validation split.

An ensemble's weights (up to 286 weightings of four members, ensemble.tune_weights) and its
thresholds or class offsets are tuned on the validation rows. Scored on those same rows, it
"beats" the winner by noise: with that many weightings to choose from, one fits the split's
accidents. So, as calibration_select chooses a calibration, both sides are cross-fitted on the
same folds of the validation rows (stratified by label set): the ensemble's weights and its
decision rules, and the winner's decision rules, are tuned on four fifths and applied to the
fifth left out, five times; the held-out predictions are pooled and each side's macro-F1 is
computed on them. Both sides pay the same tuning optimism (none), and the members' validation
probabilities, computed once by EnsembleClassifier.from_members, are all it needs.

Validation is 200 rows of a 2,000-row dataset, and on so few an ensemble's gain drowns in the
noise: on the 5-class corpus one scored 0.576 against 0.595 there, and its members' defaults were
0.585 and 0.598 on 888 held-out rows (issue 39). A search that cross-validates its TF-IDF and
embedding kinds already has each kept trial's out-of-fold probabilities on every pooled row, each
row scored by a model that never saw it. Judged on those (FOLD_ROWS), the same nested cross-fit
runs on ten times the rows, and the gain it needs is the paired noise of the two sides'
difference (a bootstrap over those rows), not one score's.

Calibration maps are not refitted per fold: every probability here (the members', the
winner's) is already through its model's own map, on both sides alike. No Django here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import search_scoring
from .calibration import CV_FOLDS
from .decisions import single_label_choice, tune_class_offsets
from .ensemble import tune_weights
from .metrics import apply_thresholds, macro_f1, macro_f1_of_counts, tune_thresholds
from .types import TrainingStopped

# A gain this small is not worth running every member at each prediction.
ENSEMBLE_MARGIN = 0.005
# Below this many rows a fold holds fewer than four: no out-of-fold judgement is made on that.
MIN_ROWS = 20
VALIDATION_ROWS, FOLD_ROWS = "validation rows", "rows of the search's folds"
BOOTSTRAP_ROUNDS = 400


@dataclass(frozen=True)
class Judged:
    """The ensemble and the winner, each scored out of fold on the same `rows` and `folds`, and
    the gain the ensemble needed (ENSEMBLE_MARGIN plus NOISE_Z standard errors of a score on
    `rows`: with one, an ensemble that won by 0.048 on 200 validation rows scored 0.564 on 888
    held-out rows against 0.580 for the model it replaced, issue 39)."""

    ensemble: float
    alone: float
    rows: int
    folds: int
    margin: float
    seconds: float
    over: str = VALIDATION_ROWS

    @property
    def wins(self) -> bool:
        return self.ensemble > self.alone + self.margin

    @property
    def basis(self) -> str:
        return f"out of fold on {self.rows} {self.over} ({self.folds} folds)"


def label_folds(truth: np.ndarray, folds: int = CV_FOLDS) -> np.ndarray:
    """Fold of each row, stratified by label set: rows sorted by their labels and dealt out in
    turn, so each fold holds about 1/folds of every label (and label combination)."""
    fold = np.empty(len(truth), dtype=np.int64)
    order = np.lexsort(truth.T[::-1]) if truth.size else np.arange(len(truth))
    fold[order] = np.arange(len(truth)) % folds
    return fold


def _decided(fit_prob: np.ndarray, fit_truth: np.ndarray, prob: np.ndarray,
             multi_label: bool) -> np.ndarray:
    """Indicator predictions for `prob` by rules (per-label thresholds, or per-class offsets)
    tuned on (fit_prob, fit_truth), as the finished model tunes them on validation."""
    if multi_label:
        return apply_thresholds(prob, tune_thresholds(fit_truth, fit_prob))
    offsets = tune_class_offsets(fit_truth.argmax(axis=1), fit_prob)
    return np.eye(prob.shape[1], dtype=np.int64)[single_label_choice(prob, offsets)]


def out_of_fold_alone(*, prob: np.ndarray, truth: np.ndarray, multi_label: bool,
                      fold: np.ndarray) -> np.ndarray:
    """One model's pooled held-out predictions, its decision rules tuned on the other folds."""
    pred = np.zeros_like(truth)
    for k in np.unique(fold):
        held = fold == k
        pred[held] = _decided(prob[~held], truth[~held], prob[held], multi_label)
    return pred


def fold_scores(*, prob: np.ndarray, truth: np.ndarray, sizes: list[int],
                multi_label: bool) -> list[float]:
    """Each fold's macro-F1 from one model's out-of-fold probabilities (`sizes` rows per fold,
    in order), its decision rules tuned on the other folds, never on the rows they score.

    A fold model's own metrics tune its calibration and rules on the fold it is scored on: on
    the 5-class corpus that flattered a strongly regularised tfidf_logreg (C 0.36) by 0.038
    (0.648 against 0.610 scored this way; 0.596 on 888 held-out rows), and a search chose it
    over kinds it did not beat (issue 39, docs/figures/search_out_of_fold.md)."""
    truth = np.asarray(truth, dtype=np.int64)
    fold = np.repeat(np.arange(len(sizes)), sizes)
    pred = out_of_fold_alone(prob=np.asarray(prob, dtype=np.float64), truth=truth,
                             multi_label=multi_label, fold=fold)
    return [macro_f1(truth[fold == k], pred[fold == k]) for k in range(len(sizes))]


def out_of_fold_ensemble(*, probs: list[np.ndarray], truth: np.ndarray, multi_label: bool,
                         fold: np.ndarray,
                         fits: Callable[[float], bool] | None = None) -> np.ndarray:
    """The ensemble's pooled held-out predictions: per fold, weights and then decision rules
    tuned on the other folds. Before each fold after the first, `fits(seconds the last one
    took)` says whether another fits; TrainingStopped when it does not."""
    stacked = np.stack(probs)  # members x rows x labels
    pred = np.zeros_like(truth)
    last = 0.0
    for k in np.unique(fold):
        if fits is not None and not fits(last):
            raise TrainingStopped(None, "Stopped while judging the ensemble out of fold")
        started = time.perf_counter()
        held = fold == k
        weights = tune_weights([p[~held] for p in probs], truth[~held], multi_label)
        combined = np.tensordot(weights, stacked, axes=1)
        pred[held] = _decided(combined[~held], truth[~held], combined[held], multi_label)
        last = time.perf_counter() - started
    return pred


def bootstrap_counts(rows: int, *, rounds: int = BOOTSTRAP_ROUNDS, seed: int = 0) -> np.ndarray:
    """rounds x rows: how often each row is drawn in each bootstrap resample (rows drawn with
    replacement, as many as there are). Scoring `counts @ per_row` scores every resample at once,
    and two models scored with the same counts are paired."""
    return np.random.default_rng(seed).multinomial(rows, np.full(rows, 1 / rows), size=rounds)


def paired_error(truth: np.ndarray, first: np.ndarray, second: np.ndarray, *,
                 rounds: int = BOOTSTRAP_ROUNDS, seed: int = 0) -> float:
    """Standard error of macro-F1(first) - macro-F1(second), both indicator predictions of the
    same rows: the spread of that difference over bootstrap resamples of the rows. Paired, so
    the rows both sides get right or wrong alike add no noise to it."""
    counts = bootstrap_counts(len(truth), rounds=rounds, seed=seed)

    def scores(pred: np.ndarray) -> np.ndarray:  # macro-F1 of every resample at once
        return macro_f1_of_counts(tp=counts @ (pred * truth), predicted=counts @ pred,
                                  actual=counts @ truth)

    return float(np.std(scores(first) - scores(second), ddof=1))


def ensemble_judge(*, probs: list[np.ndarray], alone: np.ndarray, truth: np.ndarray,
                   multi_label: bool, folds: int = CV_FOLDS, over: str = VALIDATION_ROWS,
                   fits: Callable[[float], bool] | None = None) -> Judged | None:
    """The ensemble of `probs` against one model's `alone` probabilities (the same rows,
    `truth` their labels, `over` what they are), both cross-fitted on the same folds; None
    below MIN_ROWS."""
    truth = np.asarray(truth, dtype=np.int64)
    if len(truth) < MIN_ROWS:
        return None
    started = time.perf_counter()
    fold = label_folds(truth, folds)
    together_pred = out_of_fold_ensemble(
        probs=[np.asarray(p, dtype=np.float64) for p in probs], truth=truth,
        multi_label=multi_label, fold=fold, fits=fits)
    single_pred = out_of_fold_alone(prob=np.asarray(alone, dtype=np.float64), truth=truth,
                                    multi_label=multi_label, fold=fold)
    together, single = macro_f1(truth, together_pred), macro_f1(truth, single_pred)
    if over == FOLD_ROWS:
        noise = paired_error(truth, together_pred, single_pred)
    else:  # one score's noise: the stricter rule, for the few rows of a validation split
        noise, _ = search_scoring.noise(
            search_scoring.Scored(-1, "ensemble", together),
            search_scoring.Scored(-2, "alone", single), val_rows=len(truth),
            basis=search_scoring.VALIDATION)
    return Judged(ensemble=together, alone=single, rows=len(truth), folds=folds,
                  margin=ENSEMBLE_MARGIN + search_scoring.NOISE_Z * noise,
                  seconds=time.perf_counter() - started, over=over)
