"""Calibrated probabilities: fitted on the validation split, applied by every predict_proba.

Screening and stopping rules rank and threshold on probabilities, so how often a label given
0.9 is right matters; what is shown is what was measured on held-out rows, never a promise.
The methods, each fitted on validation probabilities (a label's log-odds z = logit(p)):

- temperature: sigmoid(z / T) (Guo et al. 2017), fitted by NLL. Multi-label: one T per label.
  Single-label: one T for the softmax, so the likeliest class never changes. Keeps rankings.
- platt: sigmoid(a z + b) per label, fitted by NLL with Platt's smoothed targets (so a label
  with no overlap still gets a finite slope). It also fixes a bias (b), which a temperature
  cannot. Single-label: one-vs-rest per class, then each row renormalised to sum to one, as
  isotonic does; the likeliest class may change, and the decision rules are tuned after it.
- isotonic: a monotone step function per label (scikit-learn's IsotonicRegression, stored as
  its breakpoints and applied with numpy): the most flexible, it needs the most rows and ties
  articles on each step.
- select (the default): whichever of none, temperature, Platt and isotonic has the lowest ECE
  out of fold on validation, keeping none unless a method beats it by more than its sampling
  noise (engine/calibration_select.py). The manifest keeps every candidate's out-of-fold ECE.
- auto (kept for saved settings): per label, isotonic where its out-of-fold NLL beats a
  temperature's, temperature elsewhere. none: the identity, also what a model saved before
  calibration existed reads as.

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
PLATT, SELECT = "platt", "select"
METHODS = (SELECT, TEMPERATURE, PLATT, AUTO, ISOTONIC, NONE)
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
    with np.errstate(over="ignore"):  # exp(-z) is inf below z = -709: 1 / inf is the limit, 0
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


def cross_folds(order_by: np.ndarray) -> np.ndarray:
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
    if checked and _out_of_fold_gain(cross_folds(p), fit, loss) < MIN_NLL_GAIN:
        return 1.0
    return fit(everything)


def fit_softmax_temperature(prob: np.ndarray, y: np.ndarray, *, checked: bool = True) -> float:
    """The softmax's T: softmax(log p / T) with the lowest NLL of the true classes; 1.0 when,
    checked, it does not lower the NLL out of fold by MIN_NLL_GAIN."""
    if len(y) == 0 or len(np.unique(y)) < 2:
        return 1.0

    def loss(rows: np.ndarray, t: float) -> float:
        return _softmax_nll(_softmax_tempered(prob[rows], t), y[rows])

    def fit(rows: np.ndarray) -> float:
        return _minimise_temperature(lambda t: loss(rows, t))

    if checked and _out_of_fold_gain(cross_folds(prob.max(axis=1)), fit, loss) < MIN_NLL_GAIN:
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


def fit_platt(p: np.ndarray, y: np.ndarray) -> list[float]:
    """One label's [a, b]: sigmoid(a logit(p) + b) with the lowest NLL against Platt's (1999)
    smoothed targets, (positives + 1) / (positives + 2) and 1 / (negatives + 2): without them
    a label whose classes do not overlap on validation would be fitted an infinite slope.
    Newton's method with step halving (two parameters, so the exact Hessian is cheap); a
    negative slope, which would reverse the label's ranking, is replaced by a = 0."""
    positives = int(y.sum())
    if len(y) == 0 or positives in (0, len(y)):
        return [1.0, 0.0]
    z = _logit(p)
    target = np.where(y > 0, (positives + 1) / (positives + 2), 1 / (len(y) - positives + 2))
    design = np.column_stack([z, np.ones_like(z)])

    def loss(ab: np.ndarray) -> float:
        s = design @ ab  # -log sigmoid(s) = logaddexp(0, -s), exact where log(sigmoid) is not
        return float(np.mean(target * np.logaddexp(0, -s) + (1 - target) * np.logaddexp(0, s)))

    ab, current = np.array([1.0, 0.0]), loss(np.array([1.0, 0.0]))
    for _ in range(100):
        fitted = _sigmoid(design @ ab)
        gradient = design.T @ (fitted - target) / len(z)
        hessian = (design * (fitted * (1 - fitted))[:, None]).T @ design / len(z)
        step = np.linalg.solve(hessian + 1e-9 * np.eye(2), gradient)
        scale = 1.0
        while scale > 1e-6 and loss(ab - scale * step) > current:
            scale /= 2
        ab, previous, current = ab - scale * step, current, loss(ab - scale * step)
        if previous - current < 1e-12:
            break
    if ab[0] < 0:
        ab = np.array([0.0, float(_logit(np.array([target.mean()]))[0])])
    return [float(ab[0]), float(ab[1])]


def _apply_platt(p: np.ndarray, ab: list[float]) -> np.ndarray:
    return _sigmoid(ab[0] * _logit(p) + ab[1])


def _isotonic_wins(p: np.ndarray, y: np.ndarray) -> bool:
    """Whether isotonic's out-of-fold NLL on (p, y) beats temperature's."""
    positives = int(y.sum())
    if min(positives, len(y) - positives) < ISOTONIC_MIN_CLASS_ROWS:
        return False
    # Interleaved folds after sorting by p: every fold spans the whole probability range.
    fold = cross_folds(p)
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
    `platt`: per label, [a, b] where that label is calibrated by Platt scaling, else None.
    `isotonic`: per label, breakpoints where that label is calibrated by isotonic, else None.
    `selection` (method "select"): the method chosen and every candidate's out-of-fold ECE on
    validation (engine/calibration_select.py); {} for any other method.
    """

    method: str = NONE
    multi_label: bool = False
    temperatures: list[float] = field(default_factory=list)
    isotonic: list[dict[str, list[float]] | None] = field(default_factory=list)
    platt: list[list[float] | None] = field(default_factory=list)
    selection: dict[str, Any] = field(default_factory=dict)

    @property
    def fitted(self) -> bool:
        """Whether the map was fitted, or chosen, on validation: a selection that kept none
        and temperatures of exactly 1 included, where the check found nothing to correct."""
        return self.method != NONE

    @property
    def chosen(self) -> str:
        """The method the probabilities go through: the selection's winner, or the method."""
        return str(self.selection.get("chosen", self.method)) if self.selection else self.method

    @property
    def is_identity(self) -> bool:
        return self.method == NONE or (
            all(abs(t - 1.0) < 1e-12 for t in self.temperatures)
            and not any(self.isotonic) and not any(self.platt))

    def _column(self, prob: np.ndarray, j: int) -> np.ndarray:
        """One label's probabilities through its own map (isotonic, Platt, or a temperature)."""
        if j < len(self.isotonic) and self.isotonic[j]:
            return _apply_isotonic(prob[:, j], self.isotonic[j])
        if j < len(self.platt) and self.platt[j]:
            return _apply_platt(prob[:, j], self.platt[j])
        if self.multi_label and j < len(self.temperatures):
            return _sigmoid(_logit(prob[:, j]) / self.temperatures[j])
        return prob[:, j]

    def apply(self, prob: np.ndarray) -> np.ndarray:
        """Calibrated probabilities of raw ones, (n, L) in, (n, L) out."""
        prob = np.asarray(prob, dtype=np.float64)
        if self.is_identity or not prob.size:
            return prob
        out = np.column_stack([self._column(prob, j) for j in range(prob.shape[1])])
        if self.multi_label:
            return out
        if any(self.isotonic) or any(self.platt):  # one-vs-rest maps, rows renormalised
            return out / np.clip(out.sum(axis=1, keepdims=True), EPS, None)
        return _softmax_tempered(prob, self.temperatures[0])

    def as_dict(self) -> dict[str, Any]:
        return {"method": self.method, "multi_label": self.multi_label,
                "temperatures": [float(t) for t in self.temperatures],
                "isotonic": list(self.isotonic), "platt": list(self.platt),
                "selection": self.selection}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Calibration:
        """The stored map; a missing or empty one (a model saved before format 3) is identity,
        and one saved before Platt and the selection existed has neither."""
        if not data:
            return cls()
        return cls(method=str(data.get("method", NONE)),
                   multi_label=bool(data.get("multi_label", False)),
                   temperatures=[float(t) for t in data.get("temperatures") or []],
                   isotonic=list(data.get("isotonic") or []),
                   platt=list(data.get("platt") or []),
                   selection=dict(data.get("selection") or {}))

    def describe(self, label_names: list[str]) -> list[dict[str, Any]]:
        """Per label: how it is calibrated, for the model page."""
        rows = []
        for j, name in enumerate(label_names):
            if self.is_identity:
                how = "none" if self.method != SELECT else "none (kept as the model gives it)"
            elif j < len(self.isotonic) and self.isotonic[j]:
                how = "isotonic"
            elif j < len(self.platt) and self.platt[j]:
                a, b = self.platt[j]
                how = f"Platt a={a:.2f}, b={b:+.2f}"
            else:
                t = self.temperatures[j if self.multi_label else 0] if self.temperatures else 1.0
                how = f"temperature {t:.2f}" if t != 1.0 else "none (temperature 1)"
            rows.append({"label": name, "calibration": how})
        return rows


def _fit_multi_label(prob: np.ndarray, truth: np.ndarray, method: str,
                     checked: bool) -> Calibration:
    n_labels = prob.shape[1]
    both = [truth[:, j].min() != truth[:, j].max() for j in range(n_labels)]
    isotonic = [fit_isotonic(prob[:, j], truth[:, j])
                if both[j] and (method == ISOTONIC or (
                    method == AUTO and _isotonic_wins(prob[:, j], truth[:, j]))) else None
                for j in range(n_labels)]
    platt = [fit_platt(prob[:, j], truth[:, j]) if method == PLATT and both[j] else None
             for j in range(n_labels)]
    temperatures = [1.0 if isotonic[j] or platt[j] or method in (ISOTONIC, PLATT)
                    else fit_binary_temperature(prob[:, j], truth[:, j], checked=checked)
                    for j in range(n_labels)]
    return Calibration(method=method, multi_label=True, temperatures=temperatures,
                       isotonic=isotonic, platt=platt)


def _fit_single_label(prob: np.ndarray, truth: np.ndarray, method: str,
                      checked: bool) -> Calibration:
    n_labels = prob.shape[1]
    both = [truth[:, j].min() != truth[:, j].max() for j in range(n_labels)]
    # Isotonic or Platt is all classes or none: a mix would renormalise tempered columns
    # against one-vs-rest ones.
    use_iso = method == ISOTONIC or (method == AUTO and all(
        _isotonic_wins(prob[:, j], truth[:, j]) for j in range(n_labels)))
    if use_iso:
        return Calibration(method=method, multi_label=False, temperatures=[1.0],
                           isotonic=[fit_isotonic(prob[:, j], truth[:, j]) if both[j] else None
                                     for j in range(n_labels)])
    if method == PLATT:
        return Calibration(method=method, multi_label=False, temperatures=[1.0],
                           isotonic=[None] * n_labels,
                           platt=[fit_platt(prob[:, j], truth[:, j]) if both[j] else None
                                  for j in range(n_labels)])
    return Calibration(method=method, multi_label=False,
                       temperatures=[fit_softmax_temperature(prob, truth.argmax(axis=1),
                                                             checked=checked)],
                       isotonic=[None] * n_labels)


def fit_calibration(*, prob: np.ndarray, truth: np.ndarray, multi_label: bool,
                    method: str = SELECT, checked: bool = True) -> Calibration:
    """The calibration map fitted on validation: truth is (n, L) 0/1 for either task shape.
    checked=False fits a temperature even where it does not lower the NLL out of fold (the
    selection judges the method as a whole instead)."""
    if method not in METHODS:
        raise ValueError(f"Unknown calibration method {method!r}; one of {', '.join(METHODS)}")
    prob = np.asarray(prob, dtype=np.float64)
    truth = np.asarray(truth, dtype=np.int64)
    if method == NONE or not len(prob):
        return Calibration(method=NONE, multi_label=multi_label)
    if method == SELECT:
        # The one way back into the selection, which fits every candidate through this.
        from .calibration_select import select_calibration

        return select_calibration(prob=prob, truth=truth, multi_label=multi_label)
    fit = _fit_multi_label if multi_label else _fit_single_label
    return fit(prob, truth, method, checked)


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
                       multi_label: bool, method: str,
                       selection: dict[str, Any] | None = None) -> dict[str, Any]:
    """ECE and reliability points before and after calibration, on one split; with the
    selection's out-of-fold figures on validation, where the method was chosen."""
    before = calibration_events(raw, truth, multi_label)
    after = calibration_events(calibrated, truth, multi_label)
    return {
        "method": method,
        "chosen": (selection or {}).get("chosen", method),
        "selection": selection or {},
        "bins": ECE_BINS,
        "events": "top class" if not multi_label else "every article-label pair",
        "ece_before": expected_calibration_error(*before),
        "ece_after": expected_calibration_error(*after),
        "brier_before": brier_score(raw, truth, multi_label),
        "brier_after": brier_score(calibrated, truth, multi_label),
        "curve_before": reliability_curve(*before),
        "curve_after": reliability_curve(*after),
    }
