"""A collection: one dataset made from several exports, each article once.

The files are merged (collection_merge: duplicates found by PMID, DOI, then title and year)
into one JSON Lines file, which the ordinary import validates, splits and saves, atomically.
Adding files to a collection, or confirming its near matches, makes a new dataset, as
resolving conflicting labels does (conflicts.py): a dataset's rows are never rewritten, so the
models trained on it stay comparable.

The counts live in the dataset's report under "collection" (COUNTS_KEY, collection_report.py),
for the page, the command line and the PRISMA export: records identified, duplicates removed,
articles added, per file and in all, and the near matches still to confirm.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.core.files import File
from django.db import transaction

from core.diskspace import disk_full_refused
from projects import policy

from .collection_merge import (
    DUPLICATE_REASON,
    ID_KINDS,
    MATCHED_BY_KEY,
    MERGED_LABELS,
    MERGED_MAPPING,
    NO_LABEL,
    OTHER_IDS_KEY,
    SOURCES_KEY,
    MergeResult,
    Source,
    collection_merge,
    merged_record,
    source_fields,
)
from .collection_report import COUNTS_KEY, collection_report, merged_by_add
from .merged_groups import groups_after_merge, merge_activity_record
from .models import Dataset
from .readers import DatasetFileError, import_caps
from .splitting import DEFAULT_RATIOS, SPLITS

DECISIONS = ("merge", "split")


def collection_create(
    *,
    owner: Any,
    sources: list[Source],
    name: str,
    project: Any = None,
    description: str = "",
    unlabelled: bool = False,
    split_ratios: tuple[float, ...] = DEFAULT_RATIOS,
    seed: int = 42,
    verb: str = "dataset_uploaded",
    previous: Dataset | None = None,
    progress: Any = None,
) -> tuple[Dataset, MergeResult]:
    """One dataset from `sources`, their duplicates merged, with its counts in the report.

    DatasetFileError (naming the file) when a file cannot be read or nothing usable is left;
    nothing is saved then. `previous` is the collection these files are added to: its counts
    carry over and the near matches a person split stay split. `progress` is an import job's
    (collection_jobs.CollectionReporter): it follows each file, then the merged file's import;
    what it raises (a cancel) undoes everything."""
    if not sources:
        raise DatasetFileError("Choose at least one file.")
    carried = ((previous.report or {}).get(COUNTS_KEY) or {}) if previous else {}
    split_pairs = {frozenset(pair) for pair in carried.get("split_pairs") or []}
    with tempfile.TemporaryDirectory(prefix="medlitbot-collection-") as scratch:
        out = Path(scratch) / "collection.jsonl"
        with disk_full_refused():
            result = collection_merge(sources=sources, out=out, caps=import_caps(),
                                      split_pairs=split_pairs, unlabelled=unlabelled,
                                      on_file=getattr(progress, "source_attach", None))
        if not result.written:
            raise DatasetFileError("No usable records in the files: " + "; ".join(
                counts.line() for counts in result.files))
        if previous is not None:
            _check_labelled(result, previous=previous)
        _check_new(out, project=project)
        if previous is not None:
            _check_adds(result, previous=previous)
        mapping = dict(MERGED_MAPPING)
        if result.labelled:
            mapping["label_column"] = MERGED_LABELS
        else:
            mapping["unlabelled"] = True
        with transaction.atomic():
            dataset = _import(out, owner=owner, project=project, name=name,
                              description=description, mapping=mapping,
                              split_ratios=split_ratios, seed=seed, verb=verb,
                              progress=progress)
            dataset.report = collection_report(dataset.report or {}, result=result,
                                               previous=previous, carried=carried)
            dataset.save(update_fields=["report"])
    return dataset, result


def _check_new(path: Path, *, project: Any) -> None:
    """The import refuses a file already uploaded to the project; a merge that equals an
    existing dataset is said in a collection's words (files that add nothing new)."""
    project_id = getattr(project, "pk", project)
    if project_id is None:
        return
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    same = Dataset.objects.filter(project_id=project_id, content_hash=digest.hexdigest()).first()
    if same is not None:
        raise DatasetFileError(
            f"The files add nothing to dataset '{same.name}' (id {same.pk}): every record "
            "and identifier in them is already there.")


def unlabelled_refusal(*, dataset: Dataset, names: str, records: int | None = None) -> str:
    """Why records without a label are not added to a labelled dataset, and what to do."""
    which = f"{records} new record(s) of {names}" if records else f"the records of {names}"
    return (f"{which[0].upper()}{which[1:]} carry no label, and “{dataset.name}” is labelled "
            "(training data): a labelled collection keeps only labelled articles, so they "
            "would be dropped. Nothing was saved. Tick “prediction only” to add them to a "
            f"prediction-only version (“{dataset.name}” keeps its labels), or add a file "
            "that labels them.")


def _check_labelled(result: MergeResult, *, previous: Dataset) -> None:
    """In a labelled collection, a new article that no record labels is refused, never
    dropped quietly (nor taken for "nothing new")."""
    unlabelled = [f for f in result.files[1:] if f.dropped.get(NO_LABEL)]
    if unlabelled:
        raise DatasetFileError(unlabelled_refusal(
            dataset=previous, names=", ".join(f.name for f in unlabelled),
            records=sum(f.dropped[NO_LABEL] for f in unlabelled)))


def _check_adds(result: MergeResult, *, previous: Dataset) -> None:
    """Files added to a collection make a version only when they add an article: a file
    whose every record is there already adds nothing (the identifiers and fields it lends
    to articles already there are not worth a version of their own)."""
    new = result.files[1:]
    if not sum(f.added for f in new):
        records = sum(f.identified for f in new)
        raise DatasetFileError(
            f"The files add no article to dataset '{previous.name}' (id {previous.pk}): "
            f"each of their {records} record(s) is already in it (the same PMID, DOI or "
            "text; see “How duplicates are found”) or has no text. Nothing was saved.")


def _import(path: Path, *, owner: Any, project: Any, name: str, description: str,
            mapping: dict[str, Any], split_ratios: tuple[float, ...], seed: int,
            verb: str, progress: Any = None) -> Dataset:
    from .services import dataset_create_from_upload

    with path.open("rb") as handle:
        return dataset_create_from_upload(
            owner=owner, project=project, uploaded_file=File(handle, name=path.name),
            name=name, description=description, mapping=mapping,
            split_ratios=tuple(split_ratios), seed=seed, verb=verb, progress=progress)


def collection_add_files(*, dataset: Dataset, sources: list[Source], user: Any,
                         progress: Any = None, unlabelled: bool = False) -> Dataset:
    """A new dataset: `dataset`'s rows and the new files' records, merged as one collection.

    RoleRequired unless the user may upload in the dataset's project. `progress` as for
    collection_create (the dataset's own rows are its source 0). In a labelled dataset, new
    articles that no record labels are refused (unlabelled_refusal) unless `unlabelled`: the
    new version is then prediction only, every new article in it."""
    policy.require(user=user, action=policy.Action.UPLOAD, obj=dataset)
    if not sources:
        raise DatasetFileError("Choose at least one file to add.")
    with tempfile.TemporaryDirectory(prefix="medlitbot-collection-base-") as scratch:
        base = Path(scratch) / "rows.jsonl"
        with disk_full_refused():
            rows_write(_rows(dataset), base, labelled=dataset.is_labelled)
        names = ", ".join(source.name for source in sources)
        own = Source(path=base, name=dataset.original_filename or f"dataset {dataset.pk}",
                     overrides=_merged_overrides(dataset), read_as="rows.jsonl")
        created, _ = collection_create(
            owner=user, sources=[own, *sources], project=dataset.project_id,
            name=f"{dataset.name} (+ {names})"[:200], description=dataset.description,
            unlabelled=unlabelled or not dataset.is_labelled, split_ratios=_ratios(dataset),
            seed=dataset.split_seed, previous=dataset, progress=progress)
    return created


def _rows(dataset: Dataset) -> Iterable[dict[str, Any]]:
    from .selectors import dataset_rows_iter

    return dataset_rows_iter(dataset=dataset)


def _merged_overrides(dataset: Dataset) -> dict[str, Any]:
    if dataset.is_labelled:
        return {**MERGED_MAPPING, "label_column": MERGED_LABELS}
    return {**MERGED_MAPPING, "unlabelled": True}


def _ratios(dataset: Dataset) -> tuple[float, ...]:
    ratios = dataset.split_ratios or {}
    return tuple(float(ratios.get(name, default)) for name, default in
                 zip(SPLITS, DEFAULT_RATIOS, strict=True))


def rows_write(rows: Iterable[dict[str, Any]], path: Path, *, labelled: bool) -> int:
    """A dataset's rows as the merged file's records (what collection_merge reads back:
    identifiers, citation, source files and other identifiers kept); how many."""
    written = 0
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row_record(row, labelled=labelled), ensure_ascii=False) + "\n")
            written += 1
    return written


def row_record(row: dict[str, Any], *, labelled: bool) -> dict[str, Any]:
    """A stored row as a merged file's record (collection_merge.merged_record), with every
    field of its source record, so a new version (files added, near matches merged) keeps
    the MeSH, publication types, keywords and RIS tags of the one it was made from."""
    title, abstract = row.get("title") or "", row.get("abstract") or ""
    if not (title or abstract):
        abstract = row.get("text") or ""
    record = row.get("record") if isinstance(row.get("record"), dict) else {}
    return merged_record(
        title=title, abstract=abstract,
        labels=list(row.get("labels") or []) if labelled else None,
        identifiers=row.get("identifiers") or {}, citation=row.get("citation") or {},
        other=list(record.get(OTHER_IDS_KEY) or []), sources=list(record.get(SOURCES_KEY) or []),
        matched_by=list(record.get(MATCHED_BY_KEY) or []),
        fields=source_fields(record, texts=(title, abstract)))


# --- near matches: a person confirms (merge) or splits each pair -------------------------------


def near_matches_read(*, dataset: Dataset, pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The pairs with each side's row (title, abstract, identifiers, citation, source files),
    read from the stored rows: only the rows of these pairs."""
    import pyarrow.parquet as pq

    from .rows import row_json_load
    from .selectors import dataset_rows_file

    wanted = sorted({row for pair in pairs for row in pair["rows"]})
    found: dict[int, dict[str, Any]] = {}
    if wanted:
        try:
            table = pq.read_table(dataset_rows_file(dataset=dataset), filters=[
                ("row_id", "in", wanted)], columns=["row_id", "title", "abstract", "labels",
                                                    "identifiers", "citation", "record"])
        except (OSError, ValueError, KeyError):  # gone or damaged: the numbers still help
            table = None
        for row in table.to_pylist() if table is not None else []:
            for name in ("identifiers", "citation", "record"):
                row[name] = row_json_load(name, row.get(name))
            record = row["record"] if isinstance(row["record"], dict) else {}
            row["source_files"] = record.get("source_files") or []
            found[row["row_id"]] = row
    return [{**pair, "sides": [found.get(row, {"row_id": row}) for row in pair["rows"]]}
            for pair in pairs]


def near_matches_decide(*, dataset: Dataset, decisions: dict[int, str], user: Any,
                        progress: Any = None) -> Dataset:
    """Apply a person's decisions on near matches (pair index -> "merge" or "split").

    Split pairs leave the list and stay split in later versions; when any pair is merged, a
    new dataset is made with each merged pair as one article (the report of `dataset` is
    updated in place when only splits were decided). ValueError for no or unknown decisions.
    `progress` follows the new version's import (an import job's, collection_jobs.py)."""
    policy.require(user=user, action=policy.Action.UPLOAD, obj=dataset)
    counts = dict((dataset.report or {}).get(COUNTS_KEY) or {})
    pairs = near_decisions_check(dataset=dataset, decisions=decisions)
    splits = [pairs[i]["keys"] for i, d in decisions.items() if d == "split"]
    merges = [pairs[i]["rows"] for i, d in decisions.items() if d == "merge"]
    counts["split_pairs"] = [*(counts.get("split_pairs") or []), *splits]
    counts["near_matches"] = [p for i, p in enumerate(pairs) if i not in decisions]
    # Counts before and after, for the page: one review, one version.
    counts["last_review"] = {"articles_before": dataset.row_count,
                             "articles_after": dataset.row_count, "merged": len(merges),
                             "kept_apart": len(splits), "pairs_before": len(pairs),
                             "pairs_after": len(counts["near_matches"])}
    if not merges:
        with transaction.atomic():
            locked = Dataset.objects.select_for_update().get(pk=dataset.pk)
            locked.report = {**(locked.report or {}), COUNTS_KEY: counts}
            locked.save(update_fields=["report"])
        dataset.report = locked.report
        version = dataset
    else:
        version = version_with_merges(dataset, merges=merges, counts=counts, user=user,
                                      progress=progress, keys=[pairs[i]["keys"] for i, d in
                                                               decisions.items() if d == "merge"])
    merge_activity_record(verb="near_matches_decided", user=user, source=dataset,
                          version=version, merged=merges, kept_apart=splits,
                          summary=f"{len(merges)} near-match pair(s) confirmed as one article, "
                                  f"{len(splits)} kept apart")
    return version


def near_decisions_check(*, dataset: Dataset, decisions: dict[int, str]) -> list[dict[str, Any]]:
    """The dataset's listed near matches; ValueError, in the person's words, for no decision
    or one that is unknown or names no listed pair."""
    pairs = list(((dataset.report or {}).get(COUNTS_KEY) or {}).get("near_matches") or [])
    if not decisions:
        raise ValueError("Choose “same article” or “different articles” for at least one pair.")
    for index, decision in decisions.items():
        if decision not in DECISIONS or not 0 <= index < len(pairs):
            raise ValueError(f"Unknown decision {decision!r} for pair {index + 1}.")
    return pairs


def version_with_merges(dataset: Dataset, *, merges: list[list[int]], counts: dict[str, Any],
                        user: Any, progress: Any = None, by: str = "confirmed",
                        keys: list[list[str]] | None = None, name: str = "") -> Dataset:
    """A new dataset with each group of confirmed rows as one article (the longest abstract
    kept, every identifier, label and source file kept), the other near matches renumbered.
    The rows are read twice, so only the confirmed groups' rows are ever held in memory.
    Each group's records are kept in the counts (merged_groups), so the merge can be undone;
    `by` names how it was merged, `keys` the near pairs' fingerprints (as `merges`)."""
    keep_of = _groups(merges)
    members: dict[int, list[dict[str, Any]]] = {}
    for row in _rows(dataset):
        if row["row_id"] in keep_of:
            members.setdefault(keep_of[row["row_id"]], []).append(row)
    chosen = {leader: max(group, key=lambda r: (len(r.get("abstract") or ""), -r["row_id"]))
              ["row_id"] for leader, group in members.items()}
    position: dict[int, int] = {}
    labelled = dataset.is_labelled

    def records() -> Iterable[dict[str, Any]]:
        written = 0
        for row in _rows(dataset):
            leader = keep_of.get(row["row_id"])
            if leader is None:
                position[row["row_id"]] = written
                yield row_record(row, labelled=labelled)
            elif chosen[leader] == row["row_id"]:
                position.update({member["row_id"]: written for member in members[leader]})
                yield _merged_record(members[leader], row, labelled=labelled)
            else:
                continue
            written += 1

    removed = sum(len(group) - 1 for group in members.values())
    counts["duplicates_removed"] = counts.get("duplicates_removed", 0) + removed
    counts["merged_by"] = merged_by_add(counts.get("merged_by"), Counter({by: removed}))
    counts |= {"source_dataset_id": dataset.pk, "source_dataset_name": dataset.name}
    pair_keys = {tuple(sorted(rows)): k for rows, k in zip(merges, keys or [], strict=False)}
    kept = [{"rows": [r["row_id"] for r in group], "by": by,
             "records": [row_record(r, labelled=labelled) for r in group],
             "keys": pair_keys.get(tuple(r["row_id"] for r in group))}
            for group in members.values()]

    def settle(counts: dict[str, Any]) -> None:
        counts["near_matches"] = _renumbered(counts["near_matches"], position)
        groups_after_merge(counts, groups=kept, position=position)

    return import_version(dataset, records(), counts=counts, removed=removed, user=user,
                          progress=progress, settle=settle,
                          name=name or f"{dataset.name} (near matches merged)")


def _groups(pairs: list[list[int]]) -> dict[int, int]:
    """Row -> the smallest row of its group, pairs joined transitively (a-b and b-c)."""
    parent: dict[int, int] = {}

    def find(row: int) -> int:
        while parent.setdefault(row, row) != row:
            row = parent[row]
        return row

    for a, b in pairs:
        ra, rb = find(a), find(b)
        parent[max(ra, rb)] = min(ra, rb)
    return {row: find(row) for row in list(parent)}


def _merged_record(group: list[dict[str, Any]], kept: dict[str, Any], *,
                   labelled: bool) -> dict[str, Any]:
    """The kept row with what the rest of its group adds: labels, source files and other
    identifiers joined, identifiers and citation fields it lacks filled in."""
    out = row_record(kept, labelled=labelled)
    out[MATCHED_BY_KEY] = [*out[MATCHED_BY_KEY], "confirmed"]
    for row in group:
        other = row_record(row, labelled=labelled)
        for key, value in other.items():
            if key in (MERGED_LABELS, SOURCES_KEY, OTHER_IDS_KEY, MATCHED_BY_KEY):
                out[key] = list(dict.fromkeys([*(out.get(key) or []), *value]))
            elif not out.get(key):
                out[key] = value
            elif key in ID_KINDS and value and out[key] != value:
                out[OTHER_IDS_KEY] = list(dict.fromkeys([*out[OTHER_IDS_KEY],
                                                         f"{key}:{value}"]))
    return out


def _renumbered(pairs: list[dict[str, Any]], position: dict[int, int]) -> list[dict[str, Any]]:
    out = []
    for pair in pairs:
        rows = [position.get(row) for row in pair["rows"]]
        if None not in rows and rows[0] != rows[1]:
            out.append({**pair, "rows": rows})
    return out


def import_version(dataset: Dataset, records: Iterable[dict[str, Any]], *,
                   counts: dict[str, Any], removed: int, user: Any, name: str,
                   settle: Any, progress: Any = None) -> Dataset:
    """`records` as a new version of `dataset`, `removed` duplicates more than it (fewer when
    negative); `settle(counts)` renumbers what names rows once every record is written."""
    with tempfile.TemporaryDirectory(prefix="medlitbot-near-") as scratch:
        path = Path(scratch) / "collection.jsonl"
        with disk_full_refused(), path.open("w", encoding="utf-8") as out:
            for record in records:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
        settle(counts)
        with transaction.atomic():
            version = _import(path, owner=user, project=dataset.project_id,
                              name=name[:200],
                              description=dataset.description,
                              mapping=_merged_overrides(dataset), split_ratios=_ratios(dataset),
                              seed=dataset.split_seed, verb="dataset_uploaded",
                              progress=progress)
            report = version.report or {}
            # As collection_report: what the version before read and dropped, carried on.
            dropped = Counter((dataset.report or {}).get("dropped_by_reason") or {})
            dropped[DUPLICATE_REASON] += removed
            extra = sum(dropped.values())
            dropped.update(report.get("dropped_by_reason") or {})
            report["rows_read"] = report.get("rows_read", 0) + extra
            report["rows_dropped"] = report.get("rows_dropped", 0) + extra
            report["dropped_by_reason"] = dict(dropped)
            counts["last_review"] = {**(counts.get("last_review") or {}),
                                     "articles_after": version.row_count}
            version.report = {**report, COUNTS_KEY: counts}
            version.save(update_fields=["report"])
    return version
