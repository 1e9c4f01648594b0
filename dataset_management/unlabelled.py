"""Rows without a label: an empty label cell, or a label that means "none of these".

In a multi-label dataset such a row is an example of an article that belongs to none of the
classes: kept (the default) with an empty label set, so a model learns to give no label, or
dropped when the person asks. A label spelled "none" is not made a class beside the real ones.
In a single-label dataset every row needs its one class: an empty cell is dropped, and a label
spelled "none" stays the class it names (a single-label file's "none" is its negative class).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .mapping import NO_LABEL_DROP, NO_LABEL_KEEP, ColumnMapping
from .readers.errors import DatasetFileError
from .validation import ReportBuilder

# Compared after mapping.label_normalise (lower case, single spaces).
NONE_LABELS = frozenset({
    "none", "no label", "no labels", "no_label", "nolabel", "no-label", "n/a", "na",
    "unlabelled", "unlabeled",
})
# A real class in many files: "none of these" only when the person says so.
OTHER_LABEL = "other"
REASON = "no label"


def none_labels(*, other_means_none: bool) -> frozenset[str]:
    return NONE_LABELS | {OTHER_LABEL} if other_means_none else NONE_LABELS


@dataclass
class NoLabelCount:
    """How many rows have no label, and which none-meaning labels were seen (label -> rows)."""

    empty_cells: int = 0
    none_meaning: Counter[str] = field(default_factory=Counter)
    other_rows: int = 0  # rows carrying "other", counted whether or not it means none
    rows_without_labels: int = 0  # rows left with no label once the none-meaning go

    def add(self, *, labels: Sequence[str], none_names: frozenset[str]) -> None:
        if not labels:
            self.empty_cells += 1
        found = [name for name in labels if name in none_names]
        self.none_meaning.update(found)
        self.other_rows += OTHER_LABEL in labels
        self.rows_without_labels += len(found) == len(labels)


def no_label_count(*, labels: Iterable[Sequence[str]], other_means_none: bool) -> NoLabelCount:
    names = none_labels(other_means_none=other_means_none)
    count = NoLabelCount()
    for row in labels:
        count.add(labels=row, none_names=names)
    return count


def no_label_summary(*, count: NoLabelCount, multilabel: bool, mapping: ColumnMapping,
                     sampled: bool = False) -> dict[str, Any]:
    """What the preview and the import report say about the rows without a label."""
    rows = count.rows_without_labels if multilabel else count.empty_cells
    kept = multilabel and mapping.no_label_rows == NO_LABEL_KEEP
    of = " of the rows checked" if sampled else ""
    if not rows:
        message = ""
    elif kept:
        message = (f"{rows} row(s){of} have no label: kept as examples of none of these "
                   "(a model trained on them can give no label).")
    elif multilabel:
        message = f"{rows} row(s){of} have no label: dropped, as you asked."
    else:
        message = (f"{rows} row(s){of} have an empty label cell: dropped, since in a "
                   "single-label dataset every row needs its one class.")
    return {
        "rows": rows, "empty_cells": count.empty_cells,
        "none_labels": dict(count.none_meaning.most_common()) if multilabel else {},
        "other_rows": count.other_rows,
        "other_means_none": multilabel and mapping.other_means_none,
        "action": ("kept" if kept else "dropped") if rows else "",
        "message": message,
    }


def labels_none_removed(*, labels: list[tuple[str, ...]],
                        other_means_none: bool) -> list[tuple[str, ...]]:
    """A multi-label dataset's rows without their none-meaning labels (equal rows share one
    tuple, as they came)."""
    names = none_labels(other_means_none=other_means_none)
    cleaned: dict[tuple[str, ...], tuple[str, ...]] = {}
    out = []
    for row in labels:
        kept = cleaned.get(row)
        if kept is None:
            kept = cleaned[row] = tuple(name for name in row if name not in names)
        out.append(kept)
    return out


def rows_kept_mask(*, labels: list[tuple[str, ...]], multilabel: bool,
                   mapping: ColumnMapping) -> np.ndarray | None:
    """Which rows stay; None when every row does."""
    if multilabel and mapping.no_label_rows != NO_LABEL_DROP:
        return None
    keep = np.fromiter((bool(row) for row in labels), dtype=bool, count=len(labels))
    return None if keep.all() else keep


@dataclass
class Settled:
    """An import's labels once the rows without a label are settled."""

    labels: list[tuple[str, ...]]
    multilabel: bool
    keep: np.ndarray | None  # which of the rows read stay; None: all of them
    summary: dict[str, Any]


def unlabelled_rows_settle(*, labels: list[tuple[str, ...]], mapping: ColumnMapping,
                           builder: ReportBuilder) -> Settled:
    """Take the none-meaning labels out of a multi-label dataset's rows, then keep or drop
    (counted in `builder`, reason "no label") the rows left without a label."""
    multilabel = any(len(row) > 1 for row in labels)
    count = no_label_count(labels=labels, other_means_none=mapping.other_means_none)
    summary = no_label_summary(count=count, multilabel=multilabel, mapping=mapping)
    if multilabel:
        labels = labels_none_removed(labels=labels, other_means_none=mapping.other_means_none)
        if not any(labels):
            raise DatasetFileError("Every label in the file means “no label”: there is no "
                                   "class to learn.")
    keep = rows_kept_mask(labels=labels, multilabel=multilabel, mapping=mapping)
    if keep is not None:
        builder.keep_only(keep=keep, reason=REASON)
        labels = [row for row, stays in zip(labels, keep.tolist(), strict=True) if stays]
    if summary["message"]:
        builder.notes.append(summary["message"])
    return Settled(labels=labels, multilabel=multilabel, keep=keep, summary=summary)
