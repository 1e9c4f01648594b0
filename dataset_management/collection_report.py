"""A collection's report: the import's, with the merge's counts added (no Django settings read).

The counts live under "collection" (COUNTS_KEY), for the page, the command line and the PRISMA
export: records identified, duplicates removed, per file (collection_counts says which file a
record is counted in) and in all, the articles each file added, and the near matches still to
confirm. A version made from another (files added, near matches merged) carries the counts of
the one before it: its rows were identified once, so its files stay listed with their figures
and the new files follow; rows read and the reasons rows were dropped add up the same way, so
PRISMA's totals and its per-source lines agree on every version.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .collection_counts import FileCounts, MergeResult
from .collection_merge import DUPLICATE_REASON
from .dedup import similarity_band

COUNTS_KEY = "collection"
# The report keeps this many near matches; a person confirms them a page at a time.
MAX_NEAR_LISTED = 5000


def collection_report(report: dict[str, Any], *, result: MergeResult, previous: Any,
                      carried: dict[str, Any]) -> dict[str, Any]:
    """The import's report of a merged file with the merge's drops added (so rows read is
    every record the files held) and the collection's counts under COUNTS_KEY. `previous`
    is the dataset the files were added to (its rows the merge's first source), `carried`
    its counts."""
    prior = (previous.report or {}) if previous is not None else {}
    imported = sum((report.get("dropped_by_reason") or {}).values())
    dropped = Counter(report.get("dropped_by_reason") or {})
    for counts in result.files:
        dropped.update(counts.dropped)
    if result.duplicates_removed:
        dropped[DUPLICATE_REASON] += result.duplicates_removed
    dropped.update(prior.get("dropped_by_reason") or {})
    extra = sum(dropped.values()) - imported
    report["rows_read"] = report.get("rows_read", 0) + extra
    report["rows_dropped"] = report.get("rows_dropped", 0) + extra
    report["dropped_by_reason"] = dict(dropped)
    new = result.files[1:] if previous is not None else result.files
    files = [counts.as_dict() for counts in new]
    if previous is not None:
        files = [*_files_before(previous, own=result.files[0], carried=carried), *files]
    near = [{"rows": [a, b], "reason": why, "keys": keys, "similarity": similarity,
             "band": similarity_band(similarity)}
            for a, b, why, keys, similarity in result.near[:MAX_NEAR_LISTED]]
    report[COUNTS_KEY] = {
        "files": files,
        "records_identified": sum(f.identified for f in new) + (
            carried.get("records_identified", prior.get("rows_read", previous.row_count))
            if previous is not None else 0),
        "duplicates_removed": carried.get("duplicates_removed", 0) + result.duplicates_removed,
        "articles_added": sum(f.added for f in new),
        "merged_by": merged_by_add(carried.get("merged_by"), result.merged_by),
        "near_matches": near,
        "near_matches_found": len(result.near),
        "split_pairs": carried.get("split_pairs") or [],
        # A person's earlier merges are not carried: the rows are merged anew (merged_groups).
        "merged_groups": [{"row": row, "records": records, "by": by, "nested": {}}
                          for row, records, by in result.groups],
        **({"source_dataset_id": previous.pk, "source_dataset_name": previous.name}
           if previous is not None else {}),
    }
    return report


def _files_before(previous: Any, *, own: FileCounts,
                  carried: dict[str, Any]) -> list[dict[str, Any]]:
    """The files of the dataset the new files were added to, with their figures: a
    collection's as listed, one file's from its import report. Its own rows come first in
    the merge, so only duplicates among them (rules that match more than they did) are
    removed from them; those are counted in its last file (one file's: its own)."""
    files = [dict(f) for f in carried.get("files") or []]
    if not files:
        report = previous.report or {}
        drops = Counter(report.get("dropped_by_reason") or {})
        duplicates = sum(n for why, n in drops.items() if "duplic" in why.lower())
        files = [{"name": previous.original_filename or f"dataset {previous.pk}",
                  "format": previous.file_format,
                  "identified": int(report.get("rows_read", previous.row_count)),
                  "duplicates_removed": duplicates, "added": previous.row_count,
                  "near_matches": 0,
                  "dropped": {why: n for why, n in drops.items() if "duplic" not in why.lower()}}]
    last = files[-1]
    if own.duplicates_removed or own.dropped:
        last["duplicates_removed"] = last.get("duplicates_removed", 0) + own.duplicates_removed
        last["dropped"] = dict(Counter(last.get("dropped") or {}) + own.dropped)
        if "added" in last:
            last["added"] -= own.duplicates_removed + sum(own.dropped.values())
    return files


def merged_by_add(before: dict[str, int] | None, now: Counter) -> dict[str, int]:
    """The rules that merged records, their counts added up across versions."""
    total = Counter(before or {})
    total.update({by: n for by, n in now.items() if by})
    return dict(total)
