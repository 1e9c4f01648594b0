"""The same article with different labels: merge them, keep the majority, or drop them.

A dataset is never rewritten: models trained on it must stay comparable to its split. The
chosen rule makes a new dataset through the ordinary import (so it is validated, grouped by
normalised text, split with the original seed and ratios, and saved atomically, or not at all),
and its report says how many rows the rule touched.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.core.files import File
from django.db import transaction

from projects import policy

from .models import Dataset
from .normalize import text_key
from .selectors import dataset_rows_file, dataset_rows_iter

RULES = {
    "merge": "merged into one multi-label row",
    "majority": "kept with the labels most of their rows carry",
    "drop": "dropped",
}
SUFFIX = {"merge": "conflicts merged", "majority": "majority labels", "drop": "conflicts dropped"}


def conflicts_resolve_rows(rows: Iterable[dict[str, Any]], *, rule: str) -> tuple[
        list[dict[str, Any]], dict[str, int]]:
    """The rows to keep, in their original order, and what the rule did (counts)."""
    if rule not in RULES:
        raise ValueError(f"Unknown rule {rule!r}; choose one of {', '.join(RULES)}.")
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(text_key(row["text"]), []).append(row)
    counts = {"conflicting_groups": 0, "conflicting_rows": 0, "rows_removed": 0,
              "ties_dropped": 0}
    kept: list[dict[str, Any]] = []
    for group in groups.values():
        label_sets = [frozenset(row["labels"]) for row in group]
        if len(set(label_sets)) <= 1:
            kept += group
            continue
        counts["conflicting_groups"] += 1
        counts["conflicting_rows"] += len(group)
        survivors = _apply(rule, group, label_sets, counts)
        counts["rows_removed"] += len(group) - len(survivors)
        kept += survivors
    kept.sort(key=lambda row: row["row_id"])
    return kept, counts


def _apply(rule: str, group: list[dict[str, Any]], label_sets: list[frozenset[str]],
           counts: dict[str, int]) -> list[dict[str, Any]]:
    if rule == "merge":
        return [{**group[0], "labels": sorted(frozenset().union(*label_sets))}]
    if rule == "majority":
        (top, n), *rest = Counter(label_sets).most_common()
        if rest and rest[0][1] == n:  # no majority: nothing to keep with confidence
            counts["ties_dropped"] += len(group)
            return []
        return [row for row, labels in zip(group, label_sets, strict=True) if labels == top]
    return []


def conflicts_groups_read(*, dataset: Dataset,
                          groups: list[dict[str, list[int]]]) -> list[dict[str, Any]]:
    """One page of conflicting groups ({"row_ids", "file_rows"}, report.conflict_groups) with
    each row's title, text and labels read from the stored rows: only the rows of this page,
    which the row_id statistics of the file's row groups find without reading the rest.
    Without readable rows (or row ids, in an older report) the rows carry their numbers only."""
    import pyarrow.parquet as pq

    wanted = sorted({row_id for group in groups for row_id in group["row_ids"]})
    found: dict[int, dict[str, Any]] = {}
    if wanted:
        try:
            table = pq.read_table(dataset_rows_file(dataset=dataset),
                                  columns=["row_id", "title", "text", "labels"],
                                  filters=[("row_id", "in", wanted)])
            found = {row["row_id"]: row for row in table.to_pylist()}
        except (OSError, ValueError, KeyError):  # gone or damaged: the numbers still help
            found = {}
    shown = []
    for group in groups:
        ids = group["row_ids"] or [None] * len(group["file_rows"])
        rows = [{"file_row": file_row, **(found.get(row_id) or {})}
                for row_id, file_row in zip(ids, group["file_rows"], strict=False)]
        shown.append({"file_rows": ", ".join(str(r) for r in group["file_rows"]),
                      "rows": rows})
    return shown


def dataset_resolve_conflicts(*, dataset: Dataset, rule: str, user: Any) -> Dataset:
    """A new dataset, in the same project, with `rule` applied to the rows whose same text
    carries different labels.

    RoleRequired unless the user may upload in the dataset's project; ValueError when the rule
    is unknown or there is nothing to resolve; the import's own DatasetFileError when what is
    left cannot be a dataset (e.g. one label).
    """
    from .services import dataset_create_from_upload

    policy.require(user=user, action=policy.Action.UPLOAD, obj=dataset)
    kept, counts = conflicts_resolve_rows(dataset_rows_iter(dataset=dataset, with_record=False),
                                          rule=rule)
    if not counts["conflicting_groups"]:
        raise ValueError("No text in this dataset carries conflicting labels.")
    ratios = dataset.split_ratios or {}
    with tempfile.TemporaryDirectory(prefix="medlitbot-conflicts-") as scratch:
        path = Path(scratch) / f"{dataset.pk}-{rule}.jsonl"
        with path.open("w", encoding="utf-8") as out:
            for row in kept:
                out.write(json.dumps(_record(row), ensure_ascii=False) + "\n")
        with transaction.atomic(), path.open("rb") as handle:
            resolved = dataset_create_from_upload(
                owner=user, project=dataset.project_id,
                uploaded_file=File(handle, name=path.name),
                name=f"{dataset.name} ({SUFFIX[rule]})"[:200],
                split_ratios=tuple(ratios.get(k, d) for k, d in
                                   (("train", 0.8), ("validation", 0.1), ("test", 0.1))),
                seed=dataset.split_seed if dataset.split_seed is not None else 42,
            )
            resolved.report = {**(resolved.report or {}), "conflicts_resolved": {
                "rule": rule, "what": RULES[rule], "source_dataset_id": dataset.pk,
                "source_dataset_name": dataset.name, **counts}}
            resolved.save(update_fields=["report"])
    return resolved


def _record(row: dict[str, Any]) -> dict[str, Any]:
    identifiers = {k: v for k, v in (row.get("identifiers") or {}).items() if v}
    title, abstract = row.get("title") or "", row.get("abstract") or ""
    if not (title or abstract):
        abstract = row["text"]
    return {**identifiers, "title": title, "abstract": abstract, "labels": list(row["labels"])}
