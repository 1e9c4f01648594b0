"""The one reader for "a file of articles": import, batches, predict and evaluate all use it.

It reads any format import accepts (dataset_management.readers), maps the columns the way import
maps them (dataset_management.mapping) and joins title and abstract the one way models see them
(classification.engine.types.article_text). Each article keeps what identifies it (PMID, DOI,
RIS ID, accession number), its citation (authors, year, journal) and its original record, so a
result can go back to the reference manager it came from attached to the right record.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from classification.engine.types import article_text

from .mapping import ColumnMapping, mapping_detect_stream, name_key
from .readers import ERROR_KEY, RecordStream, read_records
from .readers.base import RECORD_KEY, cell_text

NO_TEXT = "no text"
# Column names (compared by mapping.name_key) that hold each identifier; earlier names win.
IDENTIFIER_NAMES = {
    "pmid": ("pmid", "pubmedid", "medlineid"),
    "doi": ("doi",),
    "pmcid": ("pmcid",),
    "id": ("id", "recordid", "risid", "referenceid", "refid", "articleid"),
    "accession": ("accession", "accessionnumber", "an"),
}
CITATION_NAMES = {
    "authors": ("authors", "author", "fau", "au"),
    "year": ("year", "publicationyear", "pubyear", "py", "pubdate", "publicationdate", "date",
             "dp"),
    "journal": ("journal", "journaltitle", "journalname", "journal/book", "publicationtitle",
                "jt", "jo", "ta", "source"),
}
# The one identifier a flat result (a CSV's id column) shows: the first of these a row has.
ID_ORDER = ("pmid", "id", "doi", "accession", "pmcid")
_YEAR = re.compile(r"\b(1[5-9]\d\d|2[01]\d\d)\b")
_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)
# "Smith J, Doe AB" (PubMed's CSV): a comma between authors, not inside a name.
_SHORT_AUTHOR = re.compile(r"^[^\W\d][\w' -]* [A-Z]{1,4}$")


@dataclass(slots=True)
class Article:
    row: int                   # where the record starts: line, row or record number (1-based)
    title: str
    abstract: str
    text: str                  # article_text(title, abstract): what a model sees
    raw_labels: Any            # the label cell as read ("" without a label column)
    split: str                 # the split cell as read ("" without a split column)
    identifiers: dict[str, str]  # pmid, doi, pmcid, id, accession: only those the record has
    citation: dict[str, Any]   # authors (list), year, journal: only those the record has
    record: dict[str, Any]     # as the source holds it: rispy's RIS entry, MEDLINE's tags, a row
    problem: str = ""          # why it cannot be classified; "" when it can

    @property
    def unreadable(self) -> bool:
        """The reader could not make a record of it (a row of the wrong shape)."""
        return bool(self.problem) and self.problem != NO_TEXT


class ArticleStream:
    """The articles of one file, in file order, problems included; close it (or use `with`)."""

    def __init__(self, stream: RecordStream, mapping: ColumnMapping) -> None:
        self.stream = stream
        self.mapping = mapping
        taken = {mapping.title, mapping.abstract, mapping.label, mapping.split}
        self.identifier_columns = _columns_named(IDENTIFIER_NAMES, stream.columns, taken)
        self.citation_columns = _columns_named(CITATION_NAMES, stream.columns, taken)

    format = property(lambda self: self.stream.format)
    encoding = property(lambda self: self.stream.encoding)
    columns = property(lambda self: self.stream.columns)
    details = property(lambda self: self.stream.details)

    def __iter__(self) -> Iterator[Article]:
        m = self.mapping
        for row, record in self.stream.records:
            if ERROR_KEY in record:
                yield Article(row, "", "", "", "", "", {}, {}, {}, str(record[ERROR_KEY]))
                continue
            title = cell_text(record.get(m.title)) if m.title else ""
            abstract = cell_text(record.get(m.abstract)) if m.abstract else ""
            text = article_text(title, abstract)
            yield Article(
                row=row, title=title, abstract=abstract, text=text,
                raw_labels=record.get(m.label, "") if m.label else "",
                split=str(record.get(m.split, "")) if m.split else "",
                identifiers=self._identifiers(record), citation=self._citation(record),
                record=record.pop(RECORD_KEY, None) or record,
                problem="" if text else NO_TEXT,
            )

    def _identifiers(self, record: dict[str, Any]) -> dict[str, str]:
        out = {}
        for kind, column in self.identifier_columns.items():
            value = identifier_clean(kind, cell_text(record.get(column)))
            if value:
                out[kind] = value
        return out

    def _citation(self, record: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for kind, column in self.citation_columns.items():
            value = record.get(column)
            if kind == "authors":
                authors = authors_split(value)
                if authors:
                    out[kind] = authors
            elif kind == "year":
                found = _YEAR.search(cell_text(value))
                if found:
                    out[kind] = found.group(1)
            elif cell_text(value):
                out[kind] = cell_text(value)
        return out

    def close(self) -> None:
        self.stream.close()

    def __enter__(self) -> ArticleStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def articles_read(
    *,
    path: str | Path,
    filename: str,
    mapping: ColumnMapping | None = None,
    overrides: dict[str, Any] | None = None,
    max_rows: int | None = None,
    max_row_bytes: int | None = None,
) -> ArticleStream:
    """Open a file of articles. `mapping` is used as given; without one the columns are
    detected as import detects them, with `overrides` (mapping.OVERRIDE_KEYS) applied.
    DatasetFileError for a file that cannot be read or that has no text column; the caps are
    read_records'."""
    stream = read_records(Path(path), filename=filename, max_rows=max_rows,
                          max_row_bytes=max_row_bytes)
    try:
        mapping = mapping or mapping_detect_stream(stream=stream, overrides=overrides)
    except BaseException:
        stream.close()
        raise
    return ArticleStream(stream, mapping)



def identifier_clean(kind: str, value: str) -> str:
    if kind == "doi":
        return _DOI_PREFIX.sub("", value).strip()
    if kind == "pmid":
        return value.removeprefix("PMID:").strip()
    return value


def authors_split(value: Any) -> list[str]:
    """A list stays a list; text is split on ';' or '|', or on ',' when every part is a short
    PubMed-style name ("Smith J, Doe AB"); otherwise it is one author."""
    if isinstance(value, list):
        return [a.strip() for a in map(str, value) if a.strip()]
    text = cell_text(value)
    for separator in (";", "|"):
        if separator in text:
            return [a.strip() for a in text.split(separator) if a.strip()]
    parts = [a.strip() for a in text.split(",") if a.strip()]
    if len(parts) > 1 and all(_SHORT_AUTHOR.match(p) for p in parts):
        return parts
    return [text] if text else []


def _columns_named(names: dict[str, tuple[str, ...]], columns: list[str],
                   taken: set[str | None]) -> dict[str, str]:
    by_key: dict[str, str] = {}
    for column in columns:
        if column not in taken:
            by_key.setdefault(name_key(column), column)
    found = {}
    for kind, candidates in names.items():
        column = next((by_key[n] for n in candidates if n in by_key), None)
        if column is not None and column not in found.values():
            found[kind] = column
    return found


def title_or_first_words(*, title: Any, text: Any, words: int = 12) -> str:
    """What a list shows for an article: its title, else its text's first `words` words with an
    ellipsis when cut. A row with no title (the public "medical abstracts" data has none) is
    then told apart at a glance instead of reading "(no title)" on every row."""
    shown = cell_text(title)
    if shown:
        return shown
    head = cell_text(text).split(maxsplit=words)
    return " ".join(head[:words]) + ("…" if len(head) > words else "")
