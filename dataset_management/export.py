"""Exports of articles with their labels: CSV that spreadsheet programs cannot execute (CSV /
formula injection), RIS for reference managers, JSON Lines for programs.

Batches, `manage.py predict` and dataset downloads all write through here. An export item is one
article as a dict (`export_item`): its identifiers and citation, its labels (predicted ones, with
probabilities, or a dataset's own) and its original record. RIS gives every original record
back with every field, adding the labels as KW keywords behind a prefix (settings.
EXPORT_LABEL_PREFIX) and the probabilities as an N1 note; a record that did not come from RIS
gets one made from its fields. Every writer is a generator: nothing holds more than a chunk.
Stored data stays verbatim; only what leaves as CSV is neutralised, at the last moment.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import rispy

from .articles import ID_ORDER, Article
from .source_fields import source_field_cell

# A cell starting with one of these is a formula to Excel/LibreOffice/Sheets ("=HYPERLINK(...)"),
# including after leading tab/CR, which some programs strip.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")
CONTENT_TYPES = {
    "csv": "text/csv",
    "ris": "application/x-research-info-systems",
    "jsonl": "application/jsonl",
}
EXPORT_FORMATS = tuple(CONTENT_TYPES)
PREDICTED = "predicted_labels"  # a prediction's labels; a dataset's own are "labels"
CHUNK_ITEMS = 500  # items per piece of a streamed export
_LINE_BREAK = re.compile(r"[\r\n]+")


@dataclass
class Export:
    """One download: a file already on disk (`path`) or text made as it is sent (`chunks`)."""

    filename: str
    content_type: str
    chunks: Iterable[str] | None = None
    path: Path | None = None


def csv_safe_cell(value: Any) -> str:
    """The value as text, prefixed with a single quote if a spreadsheet would evaluate it."""
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        value = "|".join(str(v) for v in value)
    text = str(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return text  # a negative number is data, not a formula
    if text.startswith(_FORMULA_START) or text.lstrip().startswith(("=", "+", "-", "@")):
        return "'" + text
    return text


def write_safe_csv(rows: Iterable[Iterable[Any]], fileobj: IO[str]) -> int:
    """Write rows (header first, if any) with every cell neutralised; returns rows written."""
    writer = csv.writer(fileobj)
    count = 0
    for row in rows:
        writer.writerow([csv_safe_cell(cell) for cell in row])
        count += 1
    return count


def csv_chunks(rows: Iterable[Iterable[Any]], *, bom: bool = True) -> Iterator[str]:
    """write_safe_csv as text pieces for a streamed download, with the BOM Excel reads as
    "this is UTF-8" unless told otherwise."""
    buffer = io.StringIO()
    if bom:
        buffer.write("\ufeff")
    writer = csv.writer(buffer)
    for count, row in enumerate(rows, start=1):
        writer.writerow([csv_safe_cell(cell) for cell in row])
        if count % CHUNK_ITEMS == 0:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


# --- items ---------------------------------------------------------------------------------------


def export_item(
    *,
    row: int,
    identifiers: dict[str, str],
    citation: dict[str, Any],
    title: str,
    abstract: str,
    record: dict[str, Any] | None,
    source_format: str,
    labels: list[str],
    labels_key: str = PREDICTED,
    probabilities: dict[str, float] | None = None,
    note: str = "",
    row_key: str = "row",
    **extra: Any,
) -> dict[str, Any]:
    """One article as every export sees it (and as a JSON Lines line shows it)."""
    item: dict[str, Any] = {
        row_key: row, "identifiers": identifiers, "title": title, "abstract": abstract,
        "authors": citation.get("authors", []), "year": citation.get("year", ""),
        "journal": citation.get("journal", ""), labels_key: list(labels),
    }
    if probabilities is not None:
        item["probabilities"] = {k: round(float(v), 4) for k, v in probabilities.items()}
    item.update(extra)
    item.update({"note": note, "source_format": source_format, "record": record})
    return item


def prediction_item(*, row: int, article: Article, source_format: str,
                    prediction: dict[str, Any] | None) -> dict[str, Any]:
    """A classified article (prediction None: skipped, the note says why)."""
    return export_item(
        row=row, identifiers=article.identifiers, citation=article.citation,
        title=article.title, abstract=article.abstract, record=article.record,
        source_format=source_format, labels=(prediction or {}).get("labels", []),
        probabilities=(prediction or {}).get("probabilities", {}),
        note=f"skipped: {article.problem}" if article.problem else "",
    )


def dataset_item(row: dict[str, Any], *, source_format: str) -> dict[str, Any]:
    """A dataset's stored row (selectors.dataset_rows_iter) with its own labels."""
    return export_item(
        row=row["row_id"], row_key="row_id", identifiers=row["identifiers"],
        citation=row["citation"], title=row["title"], abstract=row["abstract"],
        record=row.get("record"), source_format=source_format, labels=row["labels"],
        labels_key="labels", split=row["split"],
    )


def dataset_csv_header(*, identifier_kinds: list[str], fields: list[str] = ()) -> list[str]:
    """The export's own columns, then every other field the import read (`fields`)."""
    return ["row_id", *identifier_kinds, "title", "abstract", "authors", "year", "journal",
            "labels", "split", *fields]


def dataset_csv_row(item: dict[str, Any], *, identifier_kinds: list[str],
                    fields: list[str] = ()) -> list[Any]:
    ids = item["identifiers"]
    return [item["row_id"], *[ids.get(kind, "") for kind in identifier_kinds], item["title"],
            item["abstract"], "; ".join(item["authors"]), item["year"], item["journal"],
            item["labels"], item["split"],
            *[source_field_cell(item.get("record"), name) for name in fields]]


def identifier_kinds_kept(*, kinds: Iterable[str], source_format: str) -> list[str]:
    """The identifier kinds found, plus those the format's exports always keep, in ID_ORDER."""
    wanted = {*kinds, *KEPT_IDENTIFIERS.get(source_format, ())}
    return [kind for kind in ID_ORDER if kind in wanted]


def item_id(item: dict[str, Any]) -> str:
    identifiers = item.get("identifiers") or {}
    return next((identifiers[k] for k in ID_ORDER if identifiers.get(k)), "")


# Formats whose records are rows: every original column travels by its own name. The others
# (RIS, MEDLINE) have tags, not columns: their identifiers and citation travel as columns, and
# the RIS and JSON Lines downloads give the whole record back.
_FLAT_FORMATS = {"csv", "tsv", "xlsx", "json", "jsonl", "pubmed_xml"}
# Identifier columns a format's exports always have, even when no row holds one (a PubMed XML
# export without a single DOI still has its doi column, so a merge by column does not break).
KEPT_IDENTIFIERS = {"pubmed_xml": ("pmid", "doi")}
# A dataset's CSV keeps every field its import read: a PubMed import's PMCID column even empty.
_DATASET_KEPT_IDENTIFIERS = {"pubmed_xml": ("pmcid",)}
# The identifier kinds as columns of a flat result; "id" is the contract's first-found id.
_ID_COLUMNS = {"pmid": "pmid", "doi": "doi", "pmcid": "pmcid", "accession": "accession",
               "id": "record_id"}


@dataclass(frozen=True)
class SourceColumn:
    """A column of the source kept in a batch CSV: its header, and where an item holds it
    (`record`: the original row's cell; `identifier`, `citation`: the decoded value)."""

    header: str
    where: str
    key: str


def prediction_source_columns(*, columns: list[str], source_format: str,
                              identifier_kinds: Iterable[str]) -> list[SourceColumn]:
    """The source's columns a batch CSV keeps after its own: a flat file's every column by its
    own name (a "medical_abstract" stays "medical_abstract"; one named like a result column,
    "title" or "abstract", holds the same text and is written once); a RIS or MEDLINE file's
    identifiers and citation (DOI, PMID, authors, year, journal)."""
    if source_format in _FLAT_FORMATS:
        own = {"row", "id", "title", "abstract", PREDICTED, "top_terms", "note"}
        return [SourceColumn(c, "record", c) for c in columns
                if c.casefold() not in own and not c.startswith("p_")]
    kinds = set(identifier_kinds)
    return [*[SourceColumn(_ID_COLUMNS[k], "identifier", k) for k in ID_ORDER if k in kinds],
            *[SourceColumn(k, "citation", k) for k in ("authors", "year", "journal")]]


def _source_cell(item: dict[str, Any], column: SourceColumn) -> Any:
    if column.where == "identifier":
        return (item.get("identifiers") or {}).get(column.key, "")
    value = item.get(column.key) if column.where == "citation" else (
        (item.get("record") or {}).get(column.key))
    if isinstance(value, list):
        return "; ".join(map(str, value))
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    return "" if value is None else value


def prediction_csv_header(*, label_names: list[str], with_id: bool, top_terms: bool = False,
                          source_columns: Iterable[SourceColumn] = ()) -> list[str]:
    return ["row", *(["id"] if with_id else []), "title", "abstract", PREDICTED,
            *[f"p_{name}" for name in label_names], *(["top_terms"] if top_terms else []),
            "note", *[c.header for c in source_columns]]


def prediction_csv_row(item: dict[str, Any], *, label_names: list[str], with_id: bool,
                       top_terms: bool = False,
                       source_columns: Iterable[SourceColumn] = ()) -> list[Any]:
    probabilities = item.get("probabilities") or {}
    return [item["row"], *([item_id(item)] if with_id else []), item["title"], item["abstract"],
            item.get(PREDICTED, []),
            *[_probability(probabilities.get(name)) for name in label_names],
            *([top_terms_cell(item.get("top_terms"))] if top_terms else []), item["note"],
            *[_source_cell(item, c) for c in source_columns]]


def top_terms_cell(terms: dict[str, list[str]] | str | None) -> str:
    """"label: word, word; label: word": one cell a spreadsheet filter can search."""
    if isinstance(terms, str):
        return terms  # why there are none, e.g. the explanation failed for this article
    return "; ".join(f"{label}: {', '.join(words)}" for label, words in (terms or {}).items())


def _probability(value: float | None) -> str:
    return "" if value is None else f"{float(value):.4f}"


# --- JSON Lines ----------------------------------------------------------------------------------


def jsonl_line(item: dict[str, Any]) -> str:
    return json.dumps(item, ensure_ascii=False, default=str) + "\n"


def jsonl_chunks(items: Iterable[dict[str, Any]]) -> Iterator[str]:
    lines: list[str] = []
    for item in items:
        lines.append(jsonl_line(item))
        if len(lines) >= CHUNK_ITEMS:
            yield "".join(lines)
            lines = []
    yield "".join(lines)


# --- RIS -----------------------------------------------------------------------------------------


class _RisWriter(rispy.RisWriter):
    def set_header(self, count: int) -> str:
        # rispy numbers each record ("1.") by default: a line outside any record, which strict
        # readers (this project's among them) refuse. TY comes first.
        return ""


# enforce_list_tags=False: a tag read more than once (a list) is written once per value.
_WRITER = _RisWriter(enforce_list_tags=False)


def ris_chunks(items: Iterable[dict[str, Any]], *, prefix: str,
               labels_key: str = PREDICTED) -> Iterator[str]:
    """RIS text, CHUNK_ITEMS records a piece, a blank line between records."""
    references: list[dict[str, Any]] = []
    first = True
    for item in items:
        references.append(ris_reference(item, prefix=prefix, labels_key=labels_key))
        if len(references) >= CHUNK_ITEMS:
            yield ("" if first else "\n") + _WRITER.formats(references)
            references, first = [], False
    if references:
        yield ("" if first else "\n") + _WRITER.formats(references)


def ris_reference(item: dict[str, Any], *, prefix: str,
                  labels_key: str = PREDICTED) -> dict[str, Any]:
    """The item as a rispy reference: its own RIS record with every field when it came from
    RIS, one made from its fields otherwise; then the labels and the probabilities added."""
    record = item.get("record")
    if item.get("source_format") == "ris" and record:
        reference = {name: _one_line(value) for name, value in record.items()}
    else:
        reference = _ris_made(item)
    keywords = _as_list(reference.get("keywords"))
    for label in item.get(labels_key) or ():
        keyword = _one_line(f"{prefix}{label}")
        if keyword not in keywords:
            keywords.append(keyword)
    if keywords:
        reference["keywords"] = keywords
    note = _ris_note(item, prefix=prefix)
    if note:
        reference["notes"] = [*_as_list(reference.get("notes")), note]
    return reference


def _ris_made(item: dict[str, Any]) -> dict[str, Any]:
    ids = item.get("identifiers") or {}
    fields = (item.get("record") or {}) if item.get("source_format") == "nbib" else {}
    pubmed = (item.get("record") or {}) if item.get("source_format") == "pubmed_xml" else {}
    reference: dict[str, Any] = {"type_of_reference": "JOUR"}
    candidates = {
        "title": item.get("title"), "authors": item.get("authors"), "year": item.get("year"),
        "journal_name": item.get("journal"), "abstract": item.get("abstract"),
        "volume": _first(fields, "VI"), "number": _first(fields, "IP"),
        "start_page": _first(fields, "PG"), "language": _first(fields, "LA"),
        "doi": ids.get("doi"),
        # EndNote's way with a PubMed record: the PMID as accession number, PubMed as database
        # (this project's RIS reader reads the PMID back from that pair).
        "accession_number": ids.get("pmid"),
        "name_of_database": "PubMed" if ids.get("pmid") else None,
        "id": ids.get("id") or ids.get("pmid"), "custom2": ids.get("pmcid"),
        "keywords": [*fields.get("MH", ()), *fields.get("OT", ()), *pubmed.get("mesh", ()),
                     *pubmed.get("keywords", ())],
    }
    for name, value in candidates.items():
        if value:
            reference[name] = _one_line(list(value) if isinstance(value, tuple) else value)
    return reference


def _ris_note(item: dict[str, Any], *, prefix: str) -> str:
    probabilities = item.get("probabilities")
    if probabilities:
        shown = "; ".join(f"{name}={float(p):.4f}" for name, p in probabilities.items())
        return _one_line(f"{prefix} probabilities {shown}".strip())
    if item.get("note"):
        return _one_line(f"{prefix} {item['note']}".strip())
    return ""


def _one_line(value: Any) -> Any:
    """RIS holds one value a line: a line break inside a value would start a bogus field."""
    if isinstance(value, str):
        return _LINE_BREAK.sub(" ", value) if ("\n" in value or "\r" in value) else value
    if isinstance(value, list):
        return [_one_line(v) for v in value]
    if isinstance(value, dict):
        return {k: _one_line(v) for k, v in value.items()}
    return "" if value is None else str(value)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _first(fields: dict[str, Any], tag: str) -> str:
    return next(iter(fields.get(tag) or ()), "")


# --- downloads -----------------------------------------------------------------------------------


def export_filename(*, stem: str, fmt: str) -> str:
    return f"{(stem or 'articles')[:80]}.{fmt}"


def dataset_export(*, dataset: Any, fmt: str, prefix: str) -> Export:
    """A dataset's rows with their labels (KW keywords behind `prefix` in RIS); the rows are
    read as the download is sent, a batch at a time."""
    from .selectors import dataset_identifier_kinds, dataset_rows_iter, dataset_source_field_names

    rows = dataset_rows_iter(dataset=dataset)
    items = (dataset_item(row, source_format=dataset.file_format) for row in rows)
    if fmt == "csv":
        found = dataset_identifier_kinds(dataset=dataset)
        kinds = identifier_kinds_kept(
            kinds=[*found, *_DATASET_KEPT_IDENTIFIERS.get(dataset.file_format, ())],
            source_format=dataset.file_format)
        fields = dataset_source_field_names(dataset=dataset)
        chunks = csv_chunks(itertools.chain(
            [dataset_csv_header(identifier_kinds=kinds, fields=fields)],
            (dataset_csv_row(item, identifier_kinds=kinds, fields=fields) for item in items)))
    elif fmt == "ris":
        chunks = ris_chunks(items, prefix=prefix, labels_key="labels")
    else:
        chunks = jsonl_chunks(items)
    stem = Path(dataset.original_filename or "").stem or "dataset"
    return Export(filename=export_filename(stem=f"{stem}-labelled", fmt=fmt),
                  content_type=CONTENT_TYPES[fmt], chunks=chunks)


def export_response(export: Export) -> Any:
    """The download as an HTTP response: the file as it is, or text streamed as it is made."""
    from django.http import FileResponse, StreamingHttpResponse

    if export.path is not None:
        return FileResponse(export.path.open("rb"), as_attachment=True,
                            content_type=export.content_type, filename=export.filename)
    response = StreamingHttpResponse((piece.encode("utf-8") for piece in export.chunks or ()),
                                     content_type=f"{export.content_type}; charset=utf-8")
    response["Content-Disposition"] = _attachment(export.filename)
    return response


def _attachment(filename: str) -> str:
    from django.utils.http import content_disposition_header

    return content_disposition_header(as_attachment=True, filename=filename)
