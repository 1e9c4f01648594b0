"""Duplicates a person judges beyond the matcher's list: two articles that the matcher did not
pair marked as one ("by hand"), and a merge a person made undone. Each makes a new version of
the dataset (its rows are never rewritten) through one import job, as confirming near matches
does, is written in the project's log, and moves the collection's duplicates-removed count
(the report's totals, what PRISMA reads, and the per-file counts: merged_groups.py).

A merge is undone from the records kept when it was made (merged_groups.GROUPS_KEY): only
merges a person made in a version that kept them can be undone.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from projects import policy

from .collection import COUNTS_KEY, import_version, row_record, version_with_merges
from .dedup import doi_normalise, pmid_normalise
from .merged_groups import GROUPS_KEY, groups_after_split, merge_activity_record, split_position
from .models import Dataset, ImportJob
from .readers import DatasetFileError
from .selectors import dataset_rows_iter

BY_HAND = "by hand"
_IDENTIFIER_KINDS = {"pmid": pmid_normalise, "doi": doi_normalise}


def article_pick_resolve(*, dataset: Dataset, pick: str) -> int:
    """The row (0-based) that `pick` names: a row number counted from 1 (as the page and the
    CSV download list them), "pmid:…" or "doi:…" (a bare "10.…" is a DOI). ValueError, in
    the person's words, for an empty pick, a row past the end or an identifier no row has."""
    pick = pick.strip()
    if not pick:
        raise ValueError("Name two articles: a row number, a PMID (pmid:123) or a DOI.")
    if pick.isdigit():
        number = int(pick)
        if not 1 <= number <= dataset.row_count:
            raise ValueError(f"There is no row {number}: this dataset has "
                             f"{dataset.row_count} rows, numbered from 1.")
        return number - 1
    kind, _, value = pick.partition(":")
    if pick.startswith("10."):
        kind, value = "doi", pick
    normalise = _IDENTIFIER_KINDS.get(kind.strip().lower())
    wanted = normalise(value.strip()) if normalise else ""
    if not wanted:
        raise ValueError(f"“{pick}” is not a row number, a PMID (pmid:123) or a DOI.")
    kind = kind.strip().lower()
    for row in dataset_rows_iter(dataset=dataset, with_record=False):
        if normalise((row.get("identifiers") or {}).get(kind) or "") == wanted:
            return row["row_id"]
    raise ValueError(f"No article of this dataset has {kind} {value.strip()}.")


def article_picks_resolve(*, dataset: Dataset, picks: list[str]) -> list[int]:
    """The two rows two picks name; ValueError for a bad pick or one article named twice."""
    rows = [article_pick_resolve(dataset=dataset, pick=pick) for pick in picks]
    if len(rows) != 2:
        raise ValueError("Name exactly two articles.")
    if rows[0] == rows[1]:
        raise ValueError(f"Both picks name the same article (row {rows[0] + 1}): choose two "
                         "different articles.")
    return sorted(rows)


def merged_group_get(*, dataset: Dataset, index: int) -> dict[str, Any]:
    groups = ((dataset.report or {}).get(COUNTS_KEY) or {}).get(GROUPS_KEY) or []
    if not 0 <= index < len(groups):
        raise ValueError(f"There is no merge {index + 1} to undo in this dataset.")
    return groups[index]


def person_job_import(*, job: ImportJob, reporter: Any) -> Dataset:
    """The worker's part of a job queued here (imports.import_job_run calls it); ValueError
    (the row fails with it) when the dataset went or the merge to undo changed meanwhile."""
    spec = job.options["near_matches"]
    dataset = Dataset.objects.filter(pk=spec["dataset"]).first()
    if dataset is None:
        raise ValueError("The dataset was deleted meanwhile; nothing was saved.")
    if "by_hand" in spec:
        return duplicates_mark(dataset=dataset, rows=list(spec["by_hand"]), user=job.owner,
                               progress=reporter)
    index = int(spec["unmerge"]["group"])
    if merged_group_get(dataset=dataset, index=index)["row"] != spec["unmerge"]["row"]:
        raise ValueError("The merges of this dataset changed meanwhile; nothing was saved.")
    return merged_group_split(dataset=dataset, index=index, user=job.owner, progress=reporter)


def duplicates_mark(*, dataset: Dataset, rows: list[int], user: Any,
                    progress: Any = None) -> Dataset:
    """A new version with the two rows as one article, merged as a confirmed near match is
    (the longer abstract kept, every identifier, label and source file kept)."""
    policy.require(user=user, action=policy.Action.UPLOAD, obj=dataset)
    if len(set(rows)) != 2 or not all(0 <= row < dataset.row_count for row in rows):
        raise ValueError("Name two different articles of this dataset.")
    counts = dict((dataset.report or {}).get(COUNTS_KEY) or {})
    counts.setdefault("near_matches", [])
    counts.pop("last_review", None)
    with _made_before("Marking these two articles as one"):
        version = version_with_merges(dataset, merges=[sorted(rows)], counts=counts,
                                      user=user, progress=progress, by=BY_HAND,
                                      name=f"{dataset.name} (duplicates marked)")
    merge_activity_record(verb="duplicates_marked", user=user, source=dataset,
                          version=version, rows=sorted(rows),
                          summary=f"Rows {min(rows) + 1} and {max(rows) + 1} marked by hand "
                                  "as one article")
    return version


def merged_group_split(*, dataset: Dataset, index: int, user: Any,
                       progress: Any = None) -> Dataset:
    """A new version with a merge undone: the merged row written back as the records it was
    made from, each an article again, and one duplicate fewer counted per record restored."""
    policy.require(user=user, action=policy.Action.UPLOAD, obj=dataset)
    merged_group_get(dataset=dataset, index=index)
    counts = dict((dataset.report or {}).get(COUNTS_KEY) or {})
    entry = groups_after_split(counts, index=index)
    row, records = entry["row"], entry["records"]
    extra = len(records) - 1
    moved = split_position(row=row, extra=extra)
    counts["duplicates_removed"] = max(0, counts.get("duplicates_removed", 0) - extra)
    merged_by = dict(counts.get("merged_by") or {})
    merged_by[entry["by"]] = merged_by.get(entry["by"], 0) - extra
    counts["merged_by"] = {by: n for by, n in merged_by.items() if n > 0}
    if entry.get("keys"):  # a person said these are two articles: never listed again
        counts["split_pairs"] = [*(counts.get("split_pairs") or []), entry["keys"]]
    counts.pop("last_review", None)
    counts |= {"source_dataset_id": dataset.pk, "source_dataset_name": dataset.name}
    labelled = dataset.is_labelled

    def lines() -> Any:
        for stored in dataset_rows_iter(dataset=dataset):
            if stored["row_id"] == row:
                yield from records
            else:
                yield row_record(stored, labelled=labelled)

    def settle(counts: dict[str, Any]) -> None:
        counts["near_matches"] = [{**pair, "rows": [moved(r) for r in pair["rows"]]}
                                  for pair in counts.get("near_matches") or []]

    with _made_before("Undoing this merge"):
        version = import_version(dataset, lines(), counts=counts, removed=-extra, user=user,
                                 name=f"{dataset.name} (merge undone)", settle=settle,
                                 progress=progress)
    merge_activity_record(verb="duplicates_unmerged", user=user, source=dataset,
                          version=version, rows=[row + i for i in range(len(records))],
                          by=entry["by"],
                          summary=f"Merge ({entry['by']}) of row {row + 1} undone: "
                                  f"{len(records)} articles again")
    return version


@contextmanager
def _made_before(what: str) -> Iterator[None]:
    """The import refuses a version whose rows equal a dataset of the project (a merge undone
    gives back the version before it): said as what it means."""
    try:
        yield
    except DatasetFileError as exc:
        refused, _, existing = exc.message.partition("This file was already uploaded as ")
        if refused or not existing:
            raise
        raise DatasetFileError(f"{what} gives back {existing.rstrip('.')} exactly: work on "
                               "that one. Nothing was saved.") from None
