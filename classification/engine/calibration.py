"""Calibrated probabilities: fitted on the validation split, applied by every predict_proba.

Screening and stopping rules rank and threshold on probabilities, so a 0.9 must be right about
nine times in ten. Fine-tuned transformers are over-confident and class-weighted heads lean
towards rare labels, so each model is recalibrated after training:

- temperature (the default): the probabilities' log-odds divided by a fitted temperature T,
  chosen to minimise the validation negative log-likelihood (Guo et al. 2017). Multi-label:
  one T per label (each label is its own sigmoid). Single-label: one T for the softmax, because
  per-class temperatures would change which class wins, and so the model's decisions, on a
  likelihood criterion instead of the F1 the decision rules are tuned on. One number per label
  cannot overfit a 200-row validation split, it keeps every ranking (screening orders on it),
  and it never turns a probability into exactly 0 or 1.
- isotonic: a monotone step function per label (scikit-learn's IsotonicRegression, stored as
  its breakpoints and applied with numpy). It fixes bias as well as confidence but needs more
  rows, ties articles on each step, and on a small split it fits noise.
- auto: per label, isotonic where its cross-validated NLL on validation beats temperature's,
  temperature elsewhere. Judged out of fold because isotonic always wins on the rows it was
  fitted on.
- none: the identity; also what a model saved before calibration existed reads as.

Why temperature stays the default although auto scored better on the MiniLM kinds: measured by
scripts/benchmark_calibration.py on the demo data (app's split, 3 seeds, test ECE none ->
temperature / auto): tfidf_logreg 0.065 -> 0.020 / 0.020, tfidf_svm 0.020 -> 0.020 / 0.020,
minilm_embed_logreg 0.052 -> 0.046 / 0.022, minilm 0.038 -> 0.022 / 0.017. A temperature keeps
every article's rank (screening orders by these probabilities, and the ROC-AUC is unchanged),
while isotonic's steps tie articles the model told apart; auto is one setting away.

Expected calibration error (ECE) uses 15 equal-width bins: single-label, the top class's
probability against whether it is the true class; multi-label, every article-label probability
against whether the label is true. No Django here: the training child imports this module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

TEMPERATURE, ISOTONIC, AUTO, NONE = "temperature", "isotonic", "auto", "none"
METHODS = (TEMPERATURE, AUTO, ISOTONIC, NONE)
ECE_BINS = 15
EPS = 1e-7
# Temperatures outside this range mean a degenerate split (one class, or perfectly separated).
T_BOUNDS = (0.05, 20.0)
# Isotonic is considered for a label only with this many positives and negatives: fewer, and
# a step function is mostly noise.
ISOTONIC_MIN_CLASS_ROWS = 20
CV_FOLDS = 5
# A temperature is kept only if, fitted on four fifths of validation, it lowers the NLL of the
# fifth left out by this share (summed over the five folds): a model calibrated already (the
# SVM's sigmoid, fitted on its training rows) then stays as it is. Measured on the demo data
# (scripts/benchmark_calibration.py's split): tfidf_svm's out-of-fold gains were -1.4% to
# +0.3% per label, and its temperatures fitted on all of validation raised the test ECE from
# 0.020 to 0.024; tfidf_logreg's gains were 5.6% to 14.9%, and its test ECE fell 0.065 -> 0.020.
MIN_NLL_GAIN = 0.01


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, EPS, 1 - EPS)
    return np.log(p) - np.log1p(-p)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _softmax_tempered(prob: np.ndarray, temperature: float) -> np.ndarray:
    z = np.log(np.clip(prob, EPS, 1.0)) / temperature
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _binary_nll(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, EPS, 1 - EPS)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log1p(-p)))


def _softmax_nll(prob: np.ndarray, y: np.ndarray) -> float:
    return float(-np.mean(np.log(np.clip(prob[np.arange(len(y)), y], EPS, 1.0))))


def _minimise_temperature(loss: Any) -> float:
    """The T in T_BOUNDS minimising loss(T), searched on log T (the loss is smooth there)."""
    from scipy.optimize import minimize_scalar

    low, high = (math.log(b) for b in T_BOUNDS)
    found = minimize_scalar(lambda log_t: loss(math.exp(log_t)), bounds=(low, high),
                            method="bounded", options={"xatol": 1e-4})
    t = float(math.exp(found.x))
    # Keep 1.0 unless fitting really helps: a flat loss (tiny or one-class data) says nothing.
    return t if loss(t) < loss(1.0) - 1e-9 else 1.0


def _folds(order_by: np.ndarray) -> np.ndarray:
    """Fold of each row: interleaved after sorting, so every fold spans the whole range."""
    fold = np.empty(len(order_by), dtype=np.int64)
    fold[np.argsort(order_by, kind="stable")] = np.arange(len(order_by)) % CV_FOLDS
    return fold


def _out_of_fold_gain(fold: np.ndarray, fit: Any, loss: Any) -> float:
    """Relative NLL gain of a temperature fitted on the other folds over none (T = 1), summed
    over held-out folds: fit(rows) -> T, loss(rows, T) -> NLL."""
    tempered = plain = 0.0
    for k in range(CV_FOLDS):
        held = fold == k
        tempered += loss(held, fit(~held))
        plain += loss(held, 1.0)
    return (plain - tempered) / max(plain, EPS)


def fit_binary_temperature(p: np.ndarray, y: np.ndarray, *, checked: bool = True) -> float:
    """One label's T: sigmoid(logit(p) / T) with the lowest NLL on (p, y); 1.0 when, checked,
    it does not lower the NLL out of fold by MIN_NLL_GAIN."""
    if len(y) == 0 or y.min() == y.max():
        return 1.0
    z = _logit(p)

    def loss(rows: np.ndarray, t: float) -> float:
        return _binary_nll(_sigmoid(z[rows] / t), y[rows])

    def fit(rows: np.ndarray) -> float:
        return _minimise_temperature(lambda t: loss(rows, t))

    everything = np.ones(len(y), dtype=bool)
    if checked and _out_of_fold_gain(_folds(p), fit, loss) < MIN_NLL_GAIN:
        return 1.0
    return fit(everything)


def fit_softmax_temperature(prob: np.ndarray, y: np.ndarray) -> float:
    """The softmax's T: softmax(log p / T) with the lowest NLL of the true classes; 1.0 when
    it does not lower the NLL out of fold by MIN_NLL_GAIN."""
    if len(y) == 0 or len(np.unique(y)) < 2:
        return 1.0

    def loss(rows: np.ndarray, t: float) -> float:
        return _softmax_nll(_softmax_tempered(prob[rows], t), y[rows])

    def fit(rows: np.ndarray) -> float:
        return _minimise_temperature(lambda t: loss(rows, t))

    if _out_of_fold_gain(_folds(prob.max(axis=1)), fit, loss) < MIN_NLL_GAIN:
        return 1.0
    return fit(np.ones(len(y), dtype=bool))


def fit_isotonic(p: np.ndarray, y: np.ndarray) -> dict[str, list[float]]:
    """One label's isotonic map as breakpoints, kept within [1/(n+2), 1 - 1/(n+2)].

    A step where none of n validation rows was positive is no evidence that the probability is
    0: unbounded, isotonic answers about 1e-7 there, and one positive article later costs it
    16 nats of NLL. The bounds are what a uniform prior gives a step holding every row.
    """
    from sklearn.isotonic import IsotonicRegression

    low = 1.0 / (len(y) + 2)
    iso = IsotonicRegression(y_min=low, y_max=1 - low, out_of_bounds="clip")
    iso.fit(p, y)
    return {"x": [float(v) for v in iso.X_thresholds_], "y": [float(v) for v in iso.y_thresholds_]}


def _apply_isotonic(p: np.ndarray, steps: dict[str, list[float]]) -> np.ndarray:
    return np.interp(p, steps["x"], steps["y"])


def _isotonic_wins(p: np.ndarray, y: np.ndarray) -> bool:
    """Whether isotonic's out-of-fold NLL on (p, y) beats temperature's."""
    positives = int(y.sum())
    if min(positives, len(y) - positives) < ISOTONIC_MIN_CLASS_ROWS:
        return False
    # Interleaved folds after sorting by p: every fold spans the whole probability range.
    fold = _folds(p)
    iso_loss = temp_loss = 0.0
    for k in range(CV_FOLDS):
        fit, held = fold != k, fold == k
        iso_loss += _binary_nll(_apply_isotonic(p[held], fit_isotonic(p[fit], y[fit])), y[held])
        t = fit_binary_temperature(p[fit], y[fit], checked=False)
        temp_loss += _binary_nll(_sigmoid(_logit(p[held]) / t), y[held])
    return iso_loss < temp_loss


@dataclass
class Calibration:
    """A fitted calibration map: the manifest's "calibration", applied to raw probabilities.

    `temperatures`: multi-label, one per label; single-label, one for the softmax (or none).
    `isotonic`: per label, breakpoints where that label is calibrated by isotonic, else None.
    """

    method: str = NONE
    multi_label: bool = False
    temperatures: list[float] = field(default_factory=list)
    isotonic: list[dict[str, list[float]] | None] = field(default_factory=list)

    @property
    def fitted(self) -> bool:
        """Whether the map was fitted on validation: temperatures of exactly 1 included, where
        the check found the model calibrated already (see MIN_NLL_GAIN)."""
        return self.method != NONE

    @property
    def is_identity(self) -> bool:
        return self.method == NONE or (
            all(abs(t - 1.0) < 1e-12 for t in self.temperatures)
            and not any(self.isotonic))

    def apply(self, prob: np.ndarray) -> np.ndarray:
        """Calibrated probabilities of raw ones, (n, L) in, (n, L) out."""
        prob = np.asarray(prob, dtype=np.float64)
        if self.is_identity or not prob.size:
            return prob
        if self.multi_label:
            out = prob.copy()
            for j in range(prob.shape[1]):
                steps = self.isotonic[j] if j < len(self.isotonic) else None
                if steps:
                    out[:, j] = _apply_isotonic(prob[:, j], steps)
                elif j < len(self.temperatures):
                    out[:, j] = _sigmoid(_logit(prob[:, j]) / self.temperatures[j])
            return out
        if any(self.isotonic):  # one-vs-rest maps, then rows renormalised to sum to one
            out = np.column_stack([_apply_isotonic(prob[:, j], steps) if steps else prob[:, j]
                                   for j, steps in enumerate(self.isotonic)])
            return out / np.clip(out.sum(axis=1, keepdims=True), EPS, None)
        return _softmax_tempered(prob, self.temperatures[0])

    def as_dict(self) -> dict[str, Any]:
        return {"method": self.method, "multi_label": self.multi_label,
                "temperatures": [float(t) for t in self.temperatures],
                "isotonic": list(self.isotonic)}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Calibration:
        """The stored map; a missing or empty one (a model saved before format 3) is identity."""
        if not data:
            return cls()
        return cls(method=str(data.get("method", NONE)),
                   multi_label=bool(data.get("multi_label", False)),
                   temperatures=[float(t) for t in data.get("temperatures") or []],
                   isotonic=list(data.get("isotonic") or []))

    def describe(self, label_names: list[str]) -> list[dict[str, Any]]:
        """Per label: how it is calibrated, for the model page."""
        rows = []
        for j, name in enumerate(label_names):
            if self.method == NONE:
                how = "none"
            elif j < len(self.isotonic) and self.isotonic[j]:
                how = "isotonic"
            else:
                t = self.temperatures[j if self.multi_label else 0] if self.temperatures else 1.0
                how = (f"temperature {t:.2f}" if t != 1.0
                       else "already calibrated (temperature 1)")
            rows.append({"label": name, "calibration": how})
        return rows


def fit_calibration(*, prob: np.ndarray, truth: np.ndarray, multi_label: bool,
                    method: str = TEMPERATURE) -> Calibration:
    """The calibration map fitted on validation: truth is (n, L) 0/1 for either task shape."""
    if method not in METHODS:
        raise ValueError(f"Unknown calibration method {method!r}; one of {', '.join(METHODS)}")
    prob = np.asarray(prob, dtype=np.float64)
    truth = np.asarray(truth, dtype=np.int64)
    n_labels = prob.shape[1] if prob.ndim == 2 else 0
    if method == NONE or not len(prob):
        return Calibration(method=NONE, multi_label=multi_label)
    if multi_label:
        isotonic: list[dict[str, list[float]] | None] = []
        for j in range(n_labels):
            p, y = prob[:, j], truth[:, j]
            use = (method == ISOTONIC and y.min() != y.max()) or (
                method == AUTO and _isotonic_wins(p, y))
            isotonic.append(fit_isotonic(p, y) if use else None)
        temperatures = [1.0 if isotonic[j] else fit_binary_temperature(prob[:, j], truth[:, j])
                        for j in range(n_labels)]
        return Calibration(method=method, multi_label=True, temperatures=temperatures,
                           isotonic=isotonic)
    y = truth.argmax(axis=1)
    # Single-label isotonic is all classes or none: a mix would renormalise tempered columns
    # against step-mapped ones.
    use_iso = method == ISOTONIC or (method == AUTO and all(
        _isotonic_wins(prob[:, j], truth[:, j]) for j in range(n_labels)))
    if use_iso:
        return Calibration(method=method, multi_label=False, temperatures=[1.0],
                           isotonic=[fit_isotonic(prob[:, j], truth[:, j])
                                     if truth[:, j].min() != truth[:, j].max() else None
                                     for j in range(n_labels)])
    return Calibration(method=method, multi_label=False,
                       temperatures=[fit_softmax_temperature(prob, y)],
                       isotonic=[None] * n_labels)


# ---- measuring calibration -----------------------------------------------------------------


def calibration_events(prob: np.ndarray, truth: np.ndarray,
                       multi_label: bool) -> tuple[np.ndarray, np.ndarray]:
    """(confidence, correct) pairs ECE is measured on; truth is (n, L) 0/1."""
    prob = np.asarray(prob, dtype=np.float64)
    truth = np.asarray(truth, dtype=np.int64)
    if multi_label:
        return prob.ravel(), truth.ravel().astype(np.float64)
    top = prob.argmax(axis=1)
    rows = np.arange(len(prob))
    return prob[rows, top], truth[rows, top].astype(np.float64)


def _bins(confidence: np.ndarray, bins: int) -> np.ndarray:
    # Equal-width bins over [0, 1]; a confidence of exactly 1 belongs to the last one.
    return np.minimum((confidence * bins).astype(np.int64), bins - 1)


def expected_calibration_error(confidence: np.ndarray, correct: np.ndarray,
                               bins: int = ECE_BINS) -> float | None:
    """Sum over bins of (share of events) x |accuracy - mean confidence|; None with no events."""
    if not len(confidence):
        return None
    index = _bins(confidence, bins)
    total = 0.0
    for b in range(bins):
        in_bin = index == b
        if in_bin.any():
            total += in_bin.mean() * abs(correct[in_bin].mean() - confidence[in_bin].mean())
    return float(total)


def reliability_curve(confidence: np.ndarray, correct: np.ndarray,
                      bins: int = ECE_BINS) -> list[dict[str, float]]:
    """The non-empty bins: mean confidence, observed frequency and event count of each."""
    index = _bins(confidence, bins)
    return [{"confidence": float(confidence[index == b].mean()),
             "accuracy": float(correct[index == b].mean()),
             "count": int((index == b).sum())}
            for b in range(bins) if (index == b).any()]


def brier_score(prob: np.ndarray, truth: np.ndarray, multi_label: bool) -> float | None:
    """Mean squared distance of the probabilities from the 0/1 truth: per article summed over
    its classes (single-label, Brier's own form), per article-label pair (multi-label, as each
    label is its own yes/no). Unlike ECE it has no bins, so it also rewards sharp, right
    probabilities."""
    prob = np.asarray(prob, dtype=np.float64)
    if not prob.size:
        return None
    squared = (prob - np.asarray(truth, dtype=np.float64)) ** 2
    return float(squared.mean() if multi_label else squared.sum(axis=1).mean())


def calibration_report(*, raw: np.ndarray, calibrated: np.ndarray, truth: np.ndarray,
                       multi_label: bool, method: str) -> dict[str, Any]:
    """ECE and reliability points before and after calibration, on one split."""
    before = calibration_events(raw, truth, multi_label)
    after = calibration_events(calibrated, truth, multi_label)
    return {
        "method": method,
        "bins": ECE_BINS,
        "events": "top class" if not multi_label else "every article-label pair",
        "ece_before": expected_calibration_error(*before),
        "ece_after": expected_calibration_error(*after),
        "brier_before": brier_score(raw, truth, multi_label),
        "brier_after": brier_score(calibrated, truth, multi_label),
        "curve_before": reliability_curve(*before),
        "curve_after": reliability_curve(*after),
    }
