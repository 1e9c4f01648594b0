"""Assign every kept row to train, validation or test, reproducibly for a seed."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

SPLITS = ("train", "validation", "test")
SPLIT_ALIASES = {
    "train": "train", "training": "train",
    "validation": "validation", "valid": "validation", "val": "validation", "dev": "validation",
    "test": "test", "testing": "test",
}
DEFAULT_RATIOS = (0.8, 0.1, 0.1)


@dataclass
class SplitResult:
    codes: np.ndarray  # one of 0/1/2 (index into SPLITS) per row
    method: str
    notes: list[str] = field(default_factory=list)

    @property
    def sizes(self) -> dict[str, int]:
        counts = np.bincount(self.codes, minlength=3)
        return {name: int(counts[i]) for i, name in enumerate(SPLITS)}


def split_ratios_validate(ratios: tuple[float, ...] | list[float]) -> tuple[float, float, float]:
    """Raise ValueError (with a user-facing message) unless ratios are three shares summing to 1."""
    values = tuple(float(r) for r in ratios)
    if len(values) != 3 or any(r < 0 for r in values) or values[0] <= 0:
        raise ValueError("Split ratios must be three non-negative numbers (train > 0).")
    if abs(sum(values) - 1.0) > 1e-6:
        raise ValueError(f"Split ratios must add up to 1 (got {sum(values):g}).")
    return values  # type: ignore[return-value]


def split_assign(
    *,
    label_matrix: np.ndarray | None,
    multilabel: bool,
    ratios: tuple[float, float, float],
    seed: int,
    groups: np.ndarray | None = None,
) -> SplitResult:
    """Stratified where possible: iterative stratification for multi-label, sklearn otherwise.

    label_matrix is rows x labels (0/1), or None for an unlabelled dataset. groups gives each
    row a group id (rows with the same normalised text share one): a group never straddles two
    splits, or a test score would reward remembering the training rows.
    """
    if groups is not None and len(groups) and len(np.unique(groups)) < len(groups):
        return _split_groups(label_matrix=label_matrix, multilabel=multilabel, ratios=ratios,
                             seed=seed, groups=np.asarray(groups))
    n = 0 if label_matrix is None else label_matrix.shape[0]
    codes = np.zeros(n, dtype=np.int8)
    _, r_val, r_test = ratios
    n_val, n_test = round(n * r_val), round(n * r_test)
    if n_val + n_test >= n:
        n_val, n_test = max(0, min(n_val, n - 1 - n_test)), max(0, min(n_test, n - 1))
    if n_val + n_test == 0:
        return SplitResult(codes, "all_train", ["Too few rows or ratios: every row is in train."])
    notes: list[str] = []
    idx = np.arange(n)
    y = label_matrix
    method = "random" if y is None or y.shape[1] == 0 else (
        "iterative_stratification" if multilabel else "stratified"
    )
    _, holdout = _split(idx, y, n_val + n_test, seed, method, notes)
    codes[holdout] = 1
    if n_test and n_val:
        sub_y = None if y is None else y[holdout]
        _, test_pos = _split(np.arange(len(holdout)), sub_y, n_test, seed, method, notes)
        codes[holdout[test_pos]] = 2
    elif n_test:
        codes[holdout] = 2
    if notes:
        method = f"{method} (partly random)"
    return SplitResult(codes, method, notes)


def _split_groups(*, label_matrix: np.ndarray | None, multilabel: bool,
                  ratios: tuple[float, float, float], seed: int,
                  groups: np.ndarray) -> SplitResult:
    """Split one row per group, labelled with the union of its rows' labels, then broadcast."""
    ids, inverse = np.unique(groups, return_inverse=True)
    group_y = None
    if label_matrix is not None:
        group_y = np.zeros((len(ids), label_matrix.shape[1]), dtype=label_matrix.dtype)
        np.maximum.at(group_y, inverse, label_matrix)
    result = split_assign(label_matrix=group_y, multilabel=multilabel, ratios=ratios, seed=seed)
    grouped = len(groups) - len(ids)
    note = (f"{grouped} row(s) repeat another row's text (ignoring case, spacing and "
            f"punctuation): the {len(ids)} distinct texts were split, each with all its rows.")
    return SplitResult(result.codes[inverse].astype(np.int8), result.method,
                       [*result.notes, note])


def _split(idx, y, n_out, seed, method, notes):
    """Return (kept, taken) positions of idx with n_out taken, stratified if the data allows."""
    if method == "random" or len(idx) < 2:
        rng = np.random.default_rng(seed)
        perm = rng.permutation(len(idx))
        return idx[np.sort(perm[n_out:])], idx[np.sort(perm[:n_out])]
    x = np.zeros((len(idx), 1))
    try:
        if method == "iterative_stratification":
            from iterstrat.ml_stratifiers import MultilabelStratifiedShuffleSplit

            splitter = MultilabelStratifiedShuffleSplit(
                n_splits=1, test_size=n_out, random_state=seed
            )
            keep, take = next(splitter.split(x, y))
        else:
            from sklearn.model_selection import StratifiedShuffleSplit

            classes = y.argmax(axis=1)
            splitter = StratifiedShuffleSplit(n_splits=1, test_size=n_out, random_state=seed)
            keep, take = next(splitter.split(x, classes))
    except ValueError as exc:
        # sklearn refuses when a class has fewer members than the splits need.
        notes.append(f"Stratification was not possible ({exc}); that part was split at random.")
        return _split(idx, None, n_out, seed, "random", notes)
    return idx[np.sort(keep)], idx[np.sort(take)]
