"""Fitting a linear head whose SVM is calibrated over folds, with labels of one or two rows.

scikit-learn's CalibratedClassifierCV(cv=3) refuses any class (or one-vs-rest column value) with
fewer than three rows: "Requesting 3-fold cross-validation but provided less than 3 examples".
A dataset may well hold a label twice, and the cross-fitted rules and a search's folds can
leave a label two rows in one of their fit parts. Refusing those would fail a job or a trial
that the logistic heads train without a word, so such a head is given its folds by hand: the
rows that carry a rare value are fitted and scored in every fold, so each fold's SVM sees
every class and each class's sigmoid sees a positive (in-sample for those rows alone: a label
seen twice is better predicted over-confidently than never), and the rest are cut into the
usual three folds. With every value on three rows or more, nothing changes: the head fits as
it always did, bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

FOLDS = 3  # what _linear_head gives CalibratedClassifierCV


def head_fit(head: Any, x: Any, y: np.ndarray, *, seed: int) -> Any:
    """`head.fit(x, y)`, with hand-made calibration folds where a value is too rare for them."""
    calibrated = _calibrated(head)
    splits = calibration_splits(y, seed=seed) if calibrated is not None else None
    if splits is None:
        return head.fit(x, y)
    calibrated.set_params(cv=splits)
    try:
        return head.fit(x, y)
    finally:
        # The splits are the fit's business: the saved head keeps its plain fold count.
        calibrated.set_params(cv=FOLDS)
        for fitted in getattr(head, "estimators_", ()):
            if hasattr(fitted, "calibrated_classifiers_"):
                fitted.set_params(cv=FOLDS)


def _calibrated(head: Any) -> Any:
    """The CalibratedClassifierCV in `head` (itself or one-vs-rest's template), or None."""
    from sklearn.calibration import CalibratedClassifierCV

    for candidate in (head, getattr(head, "estimator", None)):
        if isinstance(candidate, CalibratedClassifierCV):
            return candidate
    return None


def rare_rows(y: np.ndarray) -> np.ndarray:
    """Whether each row carries a class (single-label) or a column value (multi-label) that
    fewer than FOLDS rows carry."""
    if y.ndim == 1:
        values, counts = np.unique(y, return_counts=True)
        rare = values[counts < FOLDS]
        return np.isin(y, rare)
    positives = y.sum(axis=0)
    negatives = len(y) - positives
    rare = np.zeros(len(y), dtype=bool)
    for column in np.flatnonzero((positives > 0) & (positives < FOLDS)):
        rare |= y[:, column] == 1
    for column in np.flatnonzero((negatives > 0) & (negatives < FOLDS)):
        rare |= y[:, column] == 0
    return rare


def calibration_splits(y: np.ndarray, *, seed: int) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """None when every value has FOLDS rows; else (fit rows, scored rows) for each fold."""
    rare = rare_rows(y)
    if not rare.any():
        return None
    from sklearn.model_selection import KFold

    always = np.flatnonzero(rare)
    common = np.flatnonzero(~rare)
    if len(common) < FOLDS:
        # Nothing to hold out: the sigmoid is fitted on the SVM's own training rows.
        everything = np.arange(len(y))
        return [(everything, everything)]
    cut = KFold(n_splits=FOLDS, shuffle=True, random_state=seed)
    return [(np.sort(np.concatenate([always, common[fit]])),
             np.sort(np.concatenate([always, common[scored]])))
            for fit, scored in cut.split(common)]
