"""Several exports into one file of articles, each article once (no Django settings read).

Pass one streams every file through the ordinary reader (any format import takes), sends each
record's keys to dedup.Matcher and spools the record to disk; only keys and a few integers per
record stay in memory. Pass two reads the spool to gather what duplicates add to the record
kept (identifiers, source files, labels, citation and source fields it lacks). Pass three
writes the kept records as JSON Lines, which the ordinary import then validates, splits and
saves: the collection is one dataset, made the way every dataset is made.

The record kept for an article is the one with the longest abstract; every identifier and
every source file's name of its duplicates stays on it (`other_identifiers` holds a second
value of a kind, e.g. a second RIS ID; `source_files` every file it came from). So is every
other field its records were read with (source_fields: PubMed's MeSH, publication types and
keywords, a RIS entry's tags, a spreadsheet's other columns), after the merged file's own
columns: the kept record's value first, a duplicate's for a field it lacks. Which file each
record is counted in (an article added, or a duplicate removed) is collection_counts' rule,
upload order, whichever record is kept.
"""

from __future__ import annotations

import functools
import hashlib
import json
from array import array
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .articles import Article, articles_read
from .collection_counts import FileCounts, MergeResult
from .dedup import (
    Matcher,
    RecordKeys,
    doi_normalise,
    pmid_normalise,
    record_keys,
    text_similarity,
)
from .mapping import LABEL_SEPARATORS, labels_parse, name_key
from .readers.base import RECORD_KEY
from .source_fields import OWN_COLUMNS

ID_KINDS = ("pmid", "doi", "pmcid", "id", "accession")
CITATION_KINDS = ("authors", "year", "journal")
# The merged file's own columns: a collection re-read (to add files) keeps what it merged.
SOURCES_KEY = "source_files"
OTHER_IDS_KEY = "other_identifiers"
# The rules (dedup.RULES' names) that joined an article's records; [] for an article found once.
MATCHED_BY_KEY = "matched_by"
# The import reads the merged file with these columns, whatever the sources called theirs.
MERGED_MAPPING = {"title_column": "title", "abstract_column": "abstract"}
MERGED_LABELS = "labels"
DUPLICATE_REASON = "duplicate records merged (same PMID or DOI, or the same text: see dedup.RULES)"
NO_LABEL = "no label"
_NORMALISE = {"pmid": pmid_normalise, "doi": doi_normalise}
# A record's fields that the merged file's own columns already carry (normalised, or joined
# across duplicates), by mapping.name_key. Leaving them out also keeps a source's "split" or
# second "title" from being read as one of the merged file's roles when it is imported.
_OWN_KEYS = frozenset(name_key(c) for c in (*OWN_COLUMNS, *ID_KINDS, *CITATION_KINDS,
                                            MERGED_LABELS, SOURCES_KEY, OTHER_IDS_KEY,
                                            MATCHED_BY_KEY))
FileHook = Callable[[int, Any], None]  # (the file's index in sources, its ArticleStream)
# An article merged from several records keeps them (merged_groups.py), so a person may undo
# the merge: the first KEPT_GROUPS such articles of a merge, of at most KEPT_RECORDS records.
KEPT_GROUPS = 200
KEPT_RECORDS = 10


@dataclass
class Source:
    """One file of a collection: where it is, the name it is shown by, its column options."""

    path: Path
    name: str
    overrides: dict[str, Any] | None = None
    read_as: str = ""  # the name whose extension picks the reader, when `name` is not it


@dataclass
class _Pass:
    """Pass one's per-record and per-article numbers: integers only."""

    file_names: list[str]
    labelled: bool
    matcher: Matcher = field(default_factory=Matcher)
    file_of: array = field(default_factory=lambda: array("l"))     # per spooled record
    length: array = field(default_factory=lambda: array("q"))      # its abstract's length
    cluster_of: array = field(default_factory=lambda: array("q"))  # per record: its article
    best: array = field(default_factory=lambda: array("q"))        # per article: its record
    size: array = field(default_factory=lambda: array("l"))        # per article: its records
    first: array = field(default_factory=lambda: array("q"))       # per article: its 1st record
    merged_by: Counter = field(default_factory=Counter)
    rules: dict[int, list[str]] = field(default_factory=dict)      # per merged article
    separators: list[str] = field(default_factory=list)           # per file
    label_maps: list[dict[str, str]] = field(default_factory=list)  # per file
    kept_groups: int = 0  # articles whose records are kept (KEPT_GROUPS)

    def settle(self) -> list[tuple[int, int, str]]:
        """Match the titles, then pick each article's record (the longest abstract, the
        first of equals); the near matches."""
        matching = self.matcher.finish()
        self.cluster_of = matching.groups
        clusters = len(self.matcher.pmid)
        self.best = array("q", [-1]) * clusters
        self.first = array("q", [-1]) * clusters
        self.size = array("l", [0]) * clusters
        for record, cluster in enumerate(self.cluster_of):
            self.size[cluster] += 1
            if self.first[cluster] < 0:
                self.first[cluster] = record
            best = self.best[cluster]
            if best < 0 or self.length[record] > self.length[best]:
                self.best[cluster] = record
        self.merged_by = matching.merged_by
        self.rules = matching.rules
        return matching.near


def keys_fingerprint(keys: RecordKeys) -> str:
    """A record's keys as 16 hex digits: a near match split by a person is known again when
    the collection is merged anew (its rows renumbered), by the fingerprints of its two sides."""
    text = "\x1f".join((keys.pmid, keys.doi, keys.title.hex(), keys.year, keys.author))
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def collection_merge(*, sources: list[Source], out: Path, caps: dict[str, int | None],
                     split_pairs: set[frozenset[str]] = frozenset(),
                     on_file: FileHook | None = None, unlabelled: bool = False) -> MergeResult:
    """Merge `sources` into the JSON Lines file `out` (its scratch files beside it).

    DatasetFileError, naming the file, for a file that cannot be read; `caps` are
    read_records' (import_caps()); `split_pairs` are near matches a person said are two
    articles (fingerprint pairs), never listed again. `on_file(index, articles)` is called as
    each file's long read starts (an import job follows its records: progress, cancel).
    `unlabelled`: the collection is prediction only, so no record is dropped for its label."""
    labelled = _labelled(sources, caps) and not unlabelled
    result = MergeResult(path=out, labelled=labelled,
                         files=[FileCounts(name=s.name) for s in sources])
    spool = out.with_name(out.name + ".spool")
    state = _Pass(file_names=[s.name for s in sources], labelled=labelled)
    try:
        with spool.open("w", encoding="utf-8") as handle:
            for index, source in enumerate(sources):
                _read_file(index, source, state, result, handle, caps, on_file)
        near = state.settle()
        result.merged_by = state.merged_by
        for record, cluster in enumerate(state.cluster_of):  # collection_counts' rule
            if state.first[cluster] != record:
                result.files[state.file_of[record]].duplicates_removed += 1
        merged = _gather(spool, state)
        texts = {cluster: "" for pair in near for cluster in pair[:2]}
        positions = _write(spool, state, merged, out, texts=texts, result=result)
    finally:
        spool.unlink(missing_ok=True)
    result.written = len(positions)
    for a, b, why in near:
        sides = [_fingerprint(state, a), _fingerprint(state, b)]
        if a in positions and b in positions and frozenset(sides) not in split_pairs:
            similarity = round(text_similarity(texts[a], texts[b]), 3)
            result.near.append((positions[a], positions[b], why, sides, similarity))
            # Counted for the file that found the later of the two first.
            result.files[state.file_of[state.first[b]]].near_matches += 1
    return result


def _fingerprint(state: _Pass, cluster: int) -> str:
    return keys_fingerprint(state.matcher.keys_of(cluster))


def _labelled(sources: list[Source], caps: dict[str, int | None]) -> bool:
    """Whether the collection has labels: any file with a label column. Opening each file
    once first also refuses a bad file before the long pass starts."""
    found = False
    for source in sources:
        with source_open(source, caps) as articles:
            found = found or bool(articles.mapping.label)
    return found


def source_open(source: Source, caps: dict[str, int | None]) -> Any:
    from .readers import DatasetFileError

    try:
        return articles_read(path=source.path, filename=source.read_as or source.name,
                             overrides=source.overrides, **caps)
    except DatasetFileError as exc:
        raise DatasetFileError(f"{source.name}: {exc.message}") from None


def _read_file(index: int, source: Source, state: _Pass, result: MergeResult, handle: Any,
               caps: dict[str, int | None], on_file: FileHook | None) -> None:
    from .readers import DatasetFileError

    counts = result.files[index]
    separators: Counter[str] = Counter()
    with source_open(source, caps) as articles:
        if on_file is not None:
            on_file(index, articles)
        counts.format = articles.format
        mapping = articles.mapping
        try:
            for article in articles:
                counts.identified += 1
                why = _drop_reason(article)
                if why:
                    counts.dropped[why] += 1
                    continue
                if isinstance(article.raw_labels, str):
                    separators.update(s for s in LABEL_SEPARATORS if s in article.raw_labels)
                _admit(index, article, state, handle)
        except DatasetFileError as exc:
            raise DatasetFileError(f"{source.name}: {exc.message}") from None
    chosen = mapping.label_separator
    if chosen is None:  # as mapping.label_separator_detect: the most used, | before ; before ,
        chosen = max(LABEL_SEPARATORS, key=lambda s: (separators[s], -LABEL_SEPARATORS.index(s)))
        chosen = chosen if separators[chosen] else ""
    state.separators.append(chosen)
    state.label_maps.append(mapping.label_map)


def _drop_reason(article: Article) -> str:
    """Why the import would drop it (said here, so merged rows and the import's rows agree)."""
    if article.unreadable:
        return f"wrong shape: {article.problem.split(',')[0]}"
    if not article.text:
        return "empty text"
    # A record without a label is kept until its duplicates are known: a labelled CSV's
    # copy lends it its labels (_write drops an article that none of its records labels).
    return ""


def _admit(index: int, article: Article, state: _Pass, handle: Any) -> None:
    """Give the matcher one record's keys and spool the record."""
    ids, citation = article.identifiers, article.citation
    state.matcher.add(record_keys(
        pmid=ids.get("pmid"), doi=ids.get("doi"), title=article.title,
        abstract=article.abstract, year=citation.get("year"), authors=citation.get("authors")))
    state.file_of.append(index)
    state.length.append(len(article.abstract))
    record = article.record if isinstance(article.record, dict) else {}
    handle.write(json.dumps({
        "title": article.title, "abstract": article.abstract, "labels": article.raw_labels,
        "ids": ids, "cit": citation,
        "src": _list(record.get(SOURCES_KEY)), "other": _list(record.get(OTHER_IDS_KEY)),
        "rules": _list(record.get(MATCHED_BY_KEY)),
        "fields": source_fields(record, texts=(article.title, article.abstract)),
    }, ensure_ascii=False) + "\n")


def _list(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def source_fields(record: Any, *, texts: tuple[str, ...] = ()) -> dict[str, Any]:
    """The fields of a record (as its reader gave it, or a merged file's line read back) that
    the merged file's own columns do not carry: MeSH, publication types, keywords, RIS tags,
    a spreadsheet's other columns. Empty ones are left out (nothing to keep or to lend), and
    so is one that holds one of `texts` (the title or abstract under another name: RIS's T1,
    a spreadsheet's "Article Title"), which the own columns carry already."""
    if not isinstance(record, dict):
        return {}
    texts = tuple(text for text in texts if text)
    return {name: value for name, value in record.items()
            if value not in (None, "", [], {}) and not _own(name)
            and not (isinstance(value, str) and value.strip() in texts)}


@functools.lru_cache(maxsize=4096)
def _own(name: str) -> bool:
    """Whether the merged file's own columns carry a field of this name (every record of a
    file has the same few names: name_key's regex runs once for each, not once per record)."""
    return name == RECORD_KEY or name_key(name) in _OWN_KEYS



def _spooled(spool: Path, state: _Pass) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """(record index, its article, the record) for each spooled record, in order."""
    with spool.open(encoding="utf-8") as handle:
        for record, line in enumerate(handle):
            yield record, state.cluster_of[record], json.loads(line)


@dataclass
class _Merged:
    """What an article's duplicates add to the record kept (articles with duplicates only)."""

    ids: dict[str, str] = field(default_factory=dict)
    other: dict[str, None] = field(default_factory=dict)
    sources: dict[str, None] = field(default_factory=dict)
    labels: dict[str, None] = field(default_factory=dict)
    citation: dict[str, Any] = field(default_factory=dict)
    rules: dict[str, None] = field(default_factory=dict)  # what earlier merges recorded
    fields: dict[str, Any] = field(default_factory=dict)  # source_fields, the first value of each
    # A record read from a file that the article's stored rows did not come from: the rules
    # of this merge are new. A file added again (its records merged in already) adds none.
    new_file: bool = False
    records: list[dict[str, Any]] | None = None  # each record's own line, when kept


def _gather(spool: Path, state: _Pass) -> dict[int, _Merged]:
    """Pass two: every identifier, source file, label and citation field of each article
    with duplicates, in file order."""
    merged: dict[int, _Merged] = {}
    for record, cluster, item in _spooled(spool, state):
        if state.size[cluster] < 2:
            continue
        if cluster not in merged:
            keep = state.kept_groups < KEPT_GROUPS and state.size[cluster] <= KEPT_RECORDS
            state.kept_groups += keep
            merged[cluster] = _Merged(records=[] if keep else None)
        into = merged[cluster]
        if into.records is not None:
            into.records.append(_output(item, state, record, None))
        _add_identifiers(into, item)
        names = _sources(item, state, record)
        brings = not set(names) <= set(into.sources)
        into.new_file = into.new_file or (brings and (not item["src"] or bool(into.sources)))
        into.sources.update(dict.fromkeys(names))
        into.rules.update(dict.fromkeys(item.get("rules") or []))
        for label in _labels(item, state, record):
            into.labels[label] = None
        for kind, value in item["cit"].items():
            into.citation.setdefault(kind, value)
        for name, value in item["fields"].items():
            into.fields.setdefault(name, value)
    return merged


def _add_identifiers(into: _Merged, item: dict[str, Any]) -> None:
    seen = {f"{k}:{_same(k, v)}" for k, v in into.ids.items()}
    seen.update(into.other)
    for kind, value in item["ids"].items():
        if kind not in into.ids:
            into.ids[kind] = value
        elif f"{kind}:{_same(kind, value)}" not in seen:
            into.other[f"{kind}:{value}"] = None
        seen.add(f"{kind}:{_same(kind, value)}")
    for other in item["other"]:
        kind, _, value = other.partition(":")
        if f"{kind}:{_same(kind, value)}" not in seen:
            into.other[other] = None


def _same(kind: str, value: str) -> str:
    """An identifier as compared: 'DOI:10.1/X' and 'https://doi.org/10.1/x' are one DOI."""
    normalise = _NORMALISE.get(kind)
    return (normalise(value) or value) if normalise else value


def _sources(item: dict[str, Any], state: _Pass, record: int) -> list[str]:
    return item["src"] or [state.file_names[state.file_of[record]]]


def _labels(item: dict[str, Any], state: _Pass, record: int) -> tuple[str, ...]:
    index = state.file_of[record]
    return labels_parse(raw=item["labels"], separator=state.separators[index],
                        label_map=state.label_maps[index])


def _write(spool: Path, state: _Pass, merged: dict[int, _Merged], out: Path, *,
           texts: dict[int, str], result: MergeResult) -> dict[int, int]:
    """Pass three: each article's kept record, with what its duplicates added; its position
    (0-based) by article. The texts of the articles in `texts` (near matches) are filled in;
    in a labelled collection an article that no record labels is dropped ("no label")."""
    positions: dict[int, int] = {}
    with out.open("w", encoding="utf-8") as handle:
        for record, cluster, item in _spooled(spool, state):
            if state.best[cluster] != record:
                continue
            line = _output(item, state, record, merged.get(cluster))
            counts = result.files[state.file_of[state.first[cluster]]]
            if state.labelled and not line[MERGED_LABELS]:
                counts.dropped[NO_LABEL] += 1
                continue
            counts.added += 1
            positions[cluster] = len(positions)
            _kept(result, state, cluster, merged.get(cluster), row=positions[cluster])
            if cluster in texts:
                texts[cluster] = f"{item['title']} {item['abstract']}"
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    return positions


def _kept(result: MergeResult, state: _Pass, cluster: int, merged: _Merged | None, *,
          row: int) -> None:
    """An article's kept records in the result's groups, unless a record would be dropped
    if written back alone (no label of its own in a labelled collection)."""
    records = merged.records if merged is not None else None
    if records and not (state.labelled and not all(r[MERGED_LABELS] for r in records)):
        rules = state.rules.get(cluster) or ["duplicate"]
        result.groups.append((row, records, rules[0]))


def _output(item: dict[str, Any], state: _Pass, record: int,
            merged: _Merged | None) -> dict[str, Any]:
    if merged is None:
        merged = _Merged(ids=item["ids"], other=dict.fromkeys(item["other"]),
                         sources=dict.fromkeys(_sources(item, state, record)),
                         labels=dict.fromkeys(_labels(item, state, record)),
                         rules=dict.fromkeys(item.get("rules") or []), fields=item["fields"])
    elif merged.new_file:
        merged.rules.update(dict.fromkeys(state.rules.get(state.cluster_of[record], [])))
    ids = {**merged.ids, **{k: v for k, v in item["ids"].items() if k not in merged.ids}}
    return merged_record(title=item["title"], abstract=item["abstract"],
                         labels=list(merged.labels) if state.labelled else None,
                         identifiers=ids, citation={**merged.citation, **item["cit"]},
                         other=list(merged.other), sources=list(merged.sources),
                         matched_by=list(merged.rules),
                         fields={**item["fields"], **{name: value for name, value in
                                                      merged.fields.items()
                                                      if name not in item["fields"]}})


def merged_record(*, title: str, abstract: str, labels: list[str] | None,
                  identifiers: dict[str, Any], citation: dict[str, Any], other: list[str],
                  sources: list[str], matched_by: list[str] | None = None,
                  fields: dict[str, Any] | None = None) -> dict[str, Any]:
    """One line of a merged file. Every record names every own column, empty or not: the JSON
    reader takes its columns from the first record, and a DOI must be read on every row.
    `fields` (source_fields) follow, only where a record has them: the import keeps every key
    of a line in its record, and none of them takes a role (MERGED_MAPPING names the text and
    label columns, the own columns come first for identifiers and citation, and _OWN_KEYS
    holds "split")."""
    out: dict[str, Any] = {"title": title, "abstract": abstract}
    if labels is not None:
        out[MERGED_LABELS] = labels
    out.update({kind: identifiers.get(kind) or "" for kind in ID_KINDS})
    out[OTHER_IDS_KEY] = other
    out.update({kind: citation.get(kind) or ("" if kind != "authors" else [])
                for kind in CITATION_KINDS})
    out[SOURCES_KEY] = sources
    out[MATCHED_BY_KEY] = list(matched_by or [])
    for name, value in (fields or {}).items():
        out.setdefault(name, value)
    return out
