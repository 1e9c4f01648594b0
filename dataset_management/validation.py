"""The validation report: what was read, dropped, duplicated, and how the labels look."""

from __future__ import annotations

import hashlib
from array import array
from collections import Counter
from typing import Any

import numpy as np

from .normalize import text_key
from .readers.errors import names_listed

MAX_EXAMPLES = 5
# Fewer examples than this and a label cannot appear in train, validation and test.
MIN_EXAMPLES_PER_LABEL = 3
# Past this many labels the co-occurrence matrix is too big to be worth storing in a JSON field.
MAX_COOCCURRENCE_LABELS = 50


class ReportBuilder:
    """Accumulates per-row facts in compact arrays while rows stream past; finish() summarises.

    Duplicates are found at the end, not as rows arrive: each kept row's normalised text is
    held only as a 16-byte digest in a flat array (16 bytes a row; a dict of the digests cost
    about 150 bytes a row, 300 MB at the 2,000,000-row cap), and groups() sorts the digests
    once to find the equal ones."""

    def __init__(self) -> None:
        self.rows_read = 0
        self.dropped: Counter[str] = Counter()
        self.dropped_examples: list[dict[str, Any]] = []
        self.chars = array("i")  # 4 bytes a row: a field stops at 1 MB
        self.words = array("i")
        self._digests = array("q")  # two int64 halves of each kept row's 16-byte digest
        self._groups: np.ndarray | None = None
        self.source_rows = array("i")  # rows stop at the cap, far below 2**31
        self.warnings: list[str] = []
        self.notes: list[str] = []

    def drop(self, *, row: int, reason: str) -> None:
        self.dropped[reason] += 1
        if len(self.dropped_examples) < MAX_EXAMPLES * 2:
            self.dropped_examples.append({"row": row, "reason": reason})

    def keep(self, *, row: int, text: str) -> int:
        index = len(self.chars)
        self.source_rows.append(row)
        self.chars.append(len(text))
        self.words.append(len(text.split()))
        # Case, spacing and punctuation variants are the same article (normalize.text_key).
        self._digests.frombytes(hashlib.blake2b(text_key(text).encode(), digest_size=16).digest())
        self._groups = None
        return index

    def keep_only(self, *, keep: np.ndarray, reason: str) -> None:
        """Drop the kept rows where `keep` is False, for a reason only the whole file tells
        (whether it is multi-label decides what a row without a label is)."""
        for index in np.flatnonzero(~keep).tolist():
            self.drop(row=self.source_rows[index], reason=reason)
        stay = np.flatnonzero(keep)
        self.source_rows = _taken(self.source_rows, stay, np.int32)
        self.chars = _taken(self.chars, stay, np.int32)
        self.words = _taken(self.words, stay, np.int32)
        halves = np.frombuffer(self._digests, dtype=np.int64).reshape(-1, 2)[stay]
        self._digests = array("q", halves.ravel().tobytes())
        self._groups = None

    def groups(self) -> np.ndarray:
        """Per kept row, the index of the first row with the same text: its group's id."""
        if self._groups is None:
            self._groups = _first_of_equal(self._digests, len(self.chars))
        return self._groups

    def finish(self, *, labels: list[tuple[str, ...]] | None, label_names: list[str],
               label_matrix: np.ndarray | None) -> dict[str, Any]:
        kept = len(self.chars)
        report: dict[str, Any] = {
            "rows_read": self.rows_read,
            "rows_kept": kept,
            "rows_dropped": sum(self.dropped.values()),
            "dropped_by_reason": dict(self.dropped.most_common()),
            "dropped_examples": self.dropped_examples,
            "duplicates": self._duplicates(labels),
            "text_length": {
                "chars": _stats(self.chars), "words": _stats(self.words),
            },
            "length_histogram": _histogram(self.words),
        }
        if labels is not None and label_matrix is not None:
            counts = label_matrix.sum(axis=0)
            report["label_counts"] = {n: int(c) for n, c in zip(label_names, counts, strict=True)}
            per_row = Counter(len(row) for row in labels)
            report["labels_per_row"] = {str(k): v for k, v in sorted(per_row.items())}
            rare = {n: int(c) for n, c in zip(label_names, counts, strict=True)
                    if c < MIN_EXAMPLES_PER_LABEL}
            report["rare_labels"] = rare
            if rare:
                self.warnings.append(
                    f"{len(rare)} label(s) have fewer than {MIN_EXAMPLES_PER_LABEL} examples and "
                    f"cannot be split or learned reliably: {names_listed(sorted(rare))}."
                )
            if len(label_names) <= MAX_COOCCURRENCE_LABELS:
                y = label_matrix.astype(np.int64)
                report["cooccurrence"] = {
                    "labels": label_names, "matrix": (y.T @ y).tolist(),
                }
            else:
                self.notes.append(
                    f"Co-occurrence matrix omitted: {len(label_names)} labels "
                    f"(> {MAX_COOCCURRENCE_LABELS})."
                )
        report["warnings"] = self.warnings
        report["notes"] = self.notes
        return report

    def _duplicates(self, labels: list[tuple[str, ...]] | None) -> dict[str, Any]:
        ids = self.groups()
        repeats = np.flatnonzero(ids != np.arange(len(ids)))  # rows that repeat an earlier one
        firsts, seen_at = np.unique(ids[repeats], return_index=True)
        # Groups in the order their second row came, as when they were counted row by row.
        order = firsts[np.argsort(seen_at, kind="stable")].tolist()
        members = _Members(ids, repeats, firsts)
        conflicting_ids = members.conflicting(labels) if labels is not None else set()
        conflicting = [members.of(g) for g in order if g in conflicting_ids]
        if len(repeats):
            self.warnings.append(
                f"{len(repeats)} row(s) repeat an earlier row's text (ignoring case, "
                "spacing and punctuation); each such group is kept in one split"
                + (f"; {len(conflicting)} of those texts carry conflicting labels." if conflicting
                   else ".")
            )
        source = self.source_rows
        examples = [members.of(g) for g in order[:MAX_EXAMPLES]]
        return {
            "duplicate_rows": len(repeats),
            "duplicate_groups": len(firsts),
            "conflicting_label_groups": len(conflicting),
            "examples": [[source[i] for i in rows] for rows in examples],
            "conflicting_examples": [[source[i] for i in rows] for rows in
                                     conflicting[:MAX_EXAMPLES]],
            # Every conflicting group, as numbers only: the stored rows' row_id (the kept
            # index, which reads their texts when a page shows them) and the file's row.
            "conflicting_row_ids": conflicting,
            "conflicting_file_rows": [[source[i] for i in rows] for rows in conflicting],
        }


def _taken(values: array, rows: np.ndarray, dtype: type) -> array:
    out = array(values.typecode)
    out.frombytes(np.frombuffer(values, dtype=dtype)[rows].tobytes())
    return out


def _first_of_equal(digests: array, n: int) -> np.ndarray:
    """Per row, the first row whose 16-byte digest equals its own. Sorted by the first half
    only (8 bytes a row to sort); the rows that share a first half, nearly always true
    duplicates, are then told apart by both halves."""
    ids = np.arange(n, dtype=np.int64)
    if n < 2:
        return ids
    halves = np.frombuffer(digests, dtype=np.int64).reshape(n, 2)
    order = np.argsort(halves[:, 0], kind="stable")
    high = halves[order, 0]
    same = high[1:] == high[:-1]
    if not same.any():
        return ids
    shared = np.zeros(n, dtype=bool)
    shared[1:] |= same
    shared[:-1] |= same
    rows = np.sort(order[shared])
    pairs = halves[rows]
    # Sorted by digest, then by row: each run of equal digests starts with its first row.
    by_digest = np.lexsort((rows, pairs[:, 1], pairs[:, 0]))
    rows, pairs = rows[by_digest], pairs[by_digest]
    starts = np.ones(len(rows), dtype=bool)
    starts[1:] = (pairs[1:] != pairs[:-1]).any(axis=1)
    ids[rows] = rows[np.maximum.accumulate(np.where(starts, np.arange(len(rows)), 0))]
    return ids


class _Members:
    """The rows of the groups of two or more, each group's rows in file order."""

    def __init__(self, ids: np.ndarray, repeats: np.ndarray, firsts: np.ndarray) -> None:
        self.ids = ids
        self.rows = np.union1d(repeats, firsts)
        self._by_group = self.rows[np.argsort(ids[self.rows], kind="stable")]
        self._keys = ids[self._by_group]

    def of(self, group: int) -> list[int]:
        lo = np.searchsorted(self._keys, group, side="left")
        hi = np.searchsorted(self._keys, group, side="right")
        return self._by_group[lo:hi].tolist()

    def conflicting(self, labels: list[tuple[str, ...]]) -> set[int]:
        """The groups whose rows do not all carry the same set of labels."""
        if not len(self.rows):
            return set()
        sets: dict[frozenset[str], int] = {}
        label_set = np.fromiter((sets.setdefault(frozenset(labels[i]), len(sets))
                                 for i in self.rows), dtype=np.int64, count=len(self.rows))
        group = self.ids[self.rows]
        order = np.lexsort((label_set, group))
        group, label_set = group[order], label_set[order]
        differs = (group[1:] == group[:-1]) & (label_set[1:] != label_set[:-1])
        return set(group[1:][differs].tolist())


def _stats(values: array) -> dict[str, float]:
    if not values:
        return {}
    a = np.asarray(values)
    return {
        "min": int(a.min()), "median": float(np.median(a)), "mean": round(float(a.mean()), 1),
        "p95": float(np.percentile(a, 95)), "max": int(a.max()),
    }


def _histogram(words: array, bins: int = 20) -> dict[str, Any]:
    if not words:
        return {"unit": "words", "edges": [], "counts": []}
    counts, edges = np.histogram(np.asarray(words), bins=bins)
    return {"unit": "words", "edges": [round(float(e), 1) for e in edges],
            "counts": counts.tolist()}


def report_lines(report: dict[str, Any]) -> list[str]:
    """The report as plain lines for a terminal."""
    lines = [
        f"Format: {report.get('format')}  encoding: {report.get('encoding') or '-'}"
        + (f"  delimiter: {report['delimiter']}" if report.get("delimiter") else ""),
        f"Columns: {names_listed(report.get('columns', []))}",
        "Mapping: " + ", ".join(f"{k}={v!r}" for k, v in report.get("mapping", {}).items()
                                 if v not in (None, {}, "")),
        f"Rows read: {report['rows_read']}  kept: {report['rows_kept']}  "
        f"dropped: {report['rows_dropped']}",
    ]
    for reason, count in report.get("dropped_by_reason", {}).items():
        lines.append(f"  dropped {count}: {reason}")
    for ex in report.get("dropped_examples", [])[:MAX_EXAMPLES]:
        lines.append(f"    e.g. row {ex['row']}: {ex['reason']}")
    dup = report.get("duplicates", {})
    lines.append(f"Duplicate texts: {dup.get('duplicate_rows', 0)} "
                 f"(conflicting labels in {dup.get('conflicting_label_groups', 0)} group(s))")
    if report.get("label_counts"):
        kind = "multi-label" if report.get("multilabel") else "single-label"
        lines.append(f"Labels ({kind}, separator {report.get('label_separator')!r}):")
        for name, count in sorted(report["label_counts"].items(), key=lambda kv: -kv[1]):
            lines.append(f"  {name}: {count}")
    else:
        lines.append("Labels: none (unlabelled: prediction only)")
    for unit in ("chars", "words"):
        s = report.get("text_length", {}).get(unit)
        if s:
            lines.append(f"Text length ({unit}): min {s['min']}  median {s['median']:g}  "
                         f"mean {s['mean']:g}  p95 {s['p95']:g}  max {s['max']}")
    split = report.get("split", {})
    if split:
        sizes = split.get("sizes", {})
        lines.append(f"Split ({split.get('method')}, seed {split.get('seed')}): "
                     + "  ".join(f"{k} {v}" for k, v in sizes.items()))
    lines += [f"Warning: {w}" for w in report.get("warnings", [])]
    lines += [f"Note: {n}" for n in report.get("notes", []) + split.get("notes", [])]
    return lines
