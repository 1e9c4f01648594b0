"""The stored validation report (dataset_management.validation) shaped for the dataset page.

The template only loops and prints; every decision about what to show lives here.
"""

from __future__ import annotations

from typing import Any

# The conflicts page lists this many groups of the same text with different labels per page.
CONFLICTS_PER_PAGE = 20


def report_summary(report: dict[str, Any]) -> dict[str, Any]:
    duplicates = report.get("duplicates") or {}
    lengths = report.get("text_length") or {}
    return {
        "present": "rows_read" in report,
        "rows_read": report.get("rows_read"),
        "rows_kept": report.get("rows_kept"),
        "rows_dropped": report.get("rows_dropped") or 0,
        "dropped_by_reason": sorted((report.get("dropped_by_reason") or {}).items(),
                                    key=lambda kv: -kv[1]),
        "dropped_examples": (report.get("dropped_examples") or [])[:5],
        "duplicate_rows": duplicates.get("duplicate_rows") or 0,
        "conflicting_groups": duplicates.get("conflicting_label_groups") or 0,
        "conflicting_examples": [", ".join(str(r) for r in rows)
                                 for rows in (duplicates.get("conflicting_examples") or [])],
        "conflicts_in_full": conflicts_listed_in_full(report),
        "lengths": [(unit, lengths[unit]) for unit in ("words", "chars") if lengths.get(unit)],
        "rare_labels": sorted((report.get("rare_labels") or {}).items()),
        "labels_per_row": sorted((report.get("labels_per_row") or {}).items(),
                                 key=lambda kv: int(kv[0])),
        "cooccurrence": _cooccurrence(report.get("cooccurrence")),
        "warnings": report.get("warnings") or [],
        "notes": [*(report.get("notes") or []), *((report.get("split") or {}).get("notes") or [])],
        "split_method": str((report.get("split") or {}).get("method", "")).replace("_", " "),
        "conflicts_resolved": report.get("conflicts_resolved"),
    }


def _cooccurrence(data: dict[str, Any] | None) -> dict[str, Any] | None:
    """Label x label counts as heatmap rows; shading by the share of the row label's articles."""
    if not data or not data.get("labels") or len(data["labels"]) < 2:
        return None
    rows = []
    for i, (label, counts) in enumerate(zip(data["labels"], data["matrix"], strict=False)):
        own = counts[i] or 1
        rows.append({"label": label, "cells": [
            {"value": v, "alpha": round(0.06 + 0.85 * min(1.0, v / own), 3),
             "dark": v / own > 0.55, "diagonal": j == i}
            for j, v in enumerate(counts)
        ]})
    return {"labels": data["labels"], "rows": rows}


# --- The conflicts page: every group of the same text with different labels -------------------

def conflicts_listed_in_full(report: dict[str, Any]) -> bool:
    """True when the report keeps every conflicting group; reports made before it did keep
    only the first few groups' file rows (validation.MAX_EXAMPLES)."""
    return "conflicting_row_ids" in (report.get("duplicates") or {})


def conflict_groups(report: dict[str, Any]) -> list[dict[str, list[int]]]:
    """Every conflicting group the report keeps, as numbers: {"row_ids", "file_rows"}. An
    older report gives its few examples, with file rows only (no row ids to read texts by)."""
    duplicates = report.get("duplicates") or {}
    if not conflicts_listed_in_full(report):
        return [{"row_ids": [], "file_rows": list(rows)}
                for rows in duplicates.get("conflicting_examples") or []]
    ids = duplicates.get("conflicting_row_ids") or []
    files = duplicates.get("conflicting_file_rows") or [[] for _ in ids]
    return [{"row_ids": list(row_ids), "file_rows": list(file_rows)}
            for row_ids, file_rows in zip(ids, files, strict=False)]


def conflicts_missing_note(report: dict[str, Any]) -> str:
    """Why an older dataset's list is short, or "" when every group is listed."""
    if conflicts_listed_in_full(report):
        return ""
    duplicates = report.get("duplicates") or {}
    total = duplicates.get("conflicting_label_groups") or 0
    shown = len(duplicates.get("conflicting_examples") or [])
    return (f"This dataset was imported before the report kept every group: only {shown} of "
            f"its {total} groups are listed, by their rows in the file. Import the file again "
            "to list them all with their texts.")
