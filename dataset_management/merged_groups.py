"""The articles a person merged (near matches confirmed, duplicates marked by hand), kept in
the collection's counts so that a merge can be undone in a later version (at most MAX_KEPT
entries; collection_merge keeps the first of the rules' merges in the same form).

Each entry under counts["merged_groups"] (GROUPS_KEY) names the merged row ("row", 0-based in
the version whose report holds it), every record it was made from as it was written before
the merge ("records", collection.row_record's lines, in row order: undoing the merge writes
them back as they were), how it was merged ("by": "confirmed", "by hand", or the name of the
dedup rule that merged it) and, for a near match, its fingerprints ("keys": a pair made apart
again is not listed again). A group that takes in a row merged earlier keeps that row's entry
under "nested" (by member index), so undoing the later merge brings the earlier one back as
it stood. Merges made before these entries were kept cannot be undone. Adding files to a
collection merges its rows anew as one source: the new version keeps only that merge's
entries (collection_merge.KEPT_GROUPS), and its rules may merge un-merged records again.

Per-file counts follow collection_counts' rule: of a group, the record whose first source file
comes first in upload order (the earlier row of equals) is the file's article, every other a
duplicate removed in its own first file.
"""

from __future__ import annotations

from typing import Any

GROUPS_KEY = "merged_groups"
# The report is read with its dataset: beyond this many entries a new merge keeps no records
# (a band of thousands merged at once), and cannot be undone.
MAX_KEPT = 1000
SOURCES_KEY = "source_files"  # collection_merge.SOURCES_KEY


def groups_after_merge(counts: dict[str, Any], *, groups: list[dict[str, Any]],
                       position: dict[int, int]) -> None:
    """counts' entries renumbered to the new version (`position`: old row -> new row) and
    one entry per new group ({"rows", "records", "by", "keys"?}), with its members' earlier
    entries nested; the per-file counts moved for each group."""
    old = {entry["row"]: entry for entry in counts.get(GROUPS_KEY) or []}
    taken = {row for group in groups for row in group["rows"]}
    kept = [{**entry, "row": position[row]} for row, entry in old.items()
            if row not in taken and row in position]
    for group in groups:
        files_moved(counts, records=group["records"], by=1)
        if len(kept) >= MAX_KEPT:
            continue
        nested = {str(i): _unplaced(old[row]) for i, row in enumerate(group["rows"])
                  if row in old}
        entry = {"row": position[group["rows"][0]], "records": group["records"],
                 "by": group["by"], "nested": nested}
        if group.get("keys"):
            entry["keys"] = group["keys"]
        kept.append(entry)
    counts[GROUPS_KEY] = sorted(kept, key=lambda entry: entry["row"])


def _unplaced(entry: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in entry.items() if key != "row"}


def groups_after_split(counts: dict[str, Any], *, index: int) -> dict[str, Any]:
    """The entry at `index` taken out (returned), the others renumbered for its records
    written back in its row's place, its nested entries placed on their restored rows; the
    per-file counts moved back."""
    entries = list(counts.get(GROUPS_KEY) or [])
    entry = entries.pop(index)
    row, extra = entry["row"], len(entry["records"]) - 1
    placed = [{**e, "row": e["row"] + extra if e["row"] > row else e["row"]} for e in entries]
    placed += [{**nested, "row": row + int(i)} for i, nested in
               (entry.get("nested") or {}).items()]
    counts[GROUPS_KEY] = sorted(placed, key=lambda e: e["row"])
    files_moved(counts, records=entry["records"], by=-1)
    return entry


def split_position(*, row: int, extra: int) -> Any:
    """Old row -> new row once `row` is written back as 1 + `extra` rows."""
    return lambda old: old if old <= row else old + extra


def files_moved(counts: dict[str, Any], *, records: list[dict[str, Any]], by: int) -> None:
    """Each record of a group but its article counted as a duplicate removed (by=1) or back
    as an article added (by=-1), in its first source file."""
    files = [dict(f) for f in counts.get("files") or []]
    counts["files"] = files
    names = [f.get("name") for f in files]

    def first_file(record: dict[str, Any]) -> int:
        sources = record.get(SOURCES_KEY) or []
        return names.index(sources[0]) if sources and sources[0] in names else len(names)

    order = sorted(range(len(records)), key=lambda i: (first_file(records[i]), i))
    for i in order[1:]:
        at = first_file(records[i])
        if at < len(files):
            files[at]["duplicates_removed"] = files[at].get("duplicates_removed", 0) + by
            files[at]["added"] = files[at].get("added", 0) - by


def merge_activity_record(*, verb: str, user: Any, source: Any, version: Any, summary: str,
                          **detail: Any) -> None:
    """One line of the project's log for a person's change to a collection's articles: who,
    what, and the version it made (`version` is `source` when only the report changed)."""
    from projects.services import activity_record

    if version.project_id is None:
        return
    made = f": new version “{version.name}”" if version.pk != source.pk else ""
    activity_record(project=version.project_id, actor=user, verb=verb, subject=version,
                    summary=f"{summary} in “{source.name}”{made}", dataset=source.pk,
                    version=version.pk, **detail)
