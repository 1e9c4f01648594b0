"""RIS (reference managers' export): TY starts a record, ER ends it.

rispy reads each record's fields (its tag names, list tags, delimited tags, unknown tags). It is
fed one record at a time, already checked and with wrapped lines joined, because on its own it
reads the whole file into a list and passes over what is wrong: a missing ER or a line outside
any record would lose records without a word, where this reader names the line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import rispy
from rispy.config import TAG_KEY_MAPPING

from .base import RECORD_KEY, Record, RecordStream, check_field
from .errors import DatasetFileError

COLUMNS = ["title", "abstract", "keywords", "authors", "year", "journal", "doi", "pmid", "id",
           "accession"]
_TAG = re.compile(r"^([A-Z][A-Z0-9])  -(?: (.*))?$")
# Where each flat column is found, by rispy's names for the tags, first found wins.
_TITLE = ("title", "primary_title")                                      # TI, T1
_ABSTRACT = ("abstract", "notes_abstract")                               # AB, N2
_AUTHORS = ("authors", "first_authors")                                  # AU, A1
_YEAR = ("year", "publication_year", "date")                             # PY, Y1, DA
_JOURNAL = ("alternate_title3", "journal_name", "secondary_title",       # JF, JO, T2
            "alternate_title2", "alternate_title1")                      # JA, J2
_YEAR_RE = re.compile(r"\b(1[5-9]\d\d|2[01]\d\d)\b")
_PMID_RE = re.compile(r"\bPMID:?\s*(\d{1,9})\b", re.IGNORECASE)
# A bare number in AN is a PMID only in a record that says it came from PubMed or MEDLINE: other
# databases (CINAHL, Embase) number their accessions too.
_PUBMED_RE = re.compile(r"pubmed|medline|\bnlm\b", re.IGNORECASE)


class _Parser(rispy.RisParser):
    # rispy files unknown tags under the mapping's "UK" entry and would crash on a literal UK
    # line (a tag of that name exists in the wild); a tag no line can have keeps UK unknown too.
    UNKNOWN_TAG = "  "
    DEFAULT_MAPPING: ClassVar[dict[str, str]] = {
        **{tag: name for tag, name in TAG_KEY_MAPPING.items() if tag != "UK"}, "  ": "unknown_tag",
    }


# enforce_list_tags=False: a tag that is not a list tag but repeats (two T2 lines) keeps every
# value, as a list, instead of rispy keeping the first; the export writes each one back.
_PARSER = _Parser(enforce_list_tags=False)


def read_ris(path: Path, *, encoding: str) -> RecordStream:
    f = path.open(encoding=encoding)

    def records() -> Iterator[Record]:
        try:
            for start, lines in _records(f):
                yield start, ris_flat(_PARSER.parse_lines(iter(lines))[0])
        finally:
            f.close()

    return RecordStream("ris", encoding, list(COLUMNS), records(), close=f.close)


def _records(lines) -> Iterator[tuple[int, list[str]]]:
    """Each record's first line number and its lines, one field a line, wrapped lines joined,
    every value checked; DatasetFileError naming the line for what is not RIS."""
    record: list[list[str]] | None = None
    start = count = 0
    for number, raw in enumerate(lines, start=1):
        line = raw.lstrip("\ufeff").rstrip("\r\n")
        match = _TAG.match(line)
        if not match:
            if line.strip() and record is not None:
                # A continuation line wraps the previous tag's value.
                record[-1][1] = check_field(f"{record[-1][1]} {line.strip()}".strip(),
                                            f"Line {number}")
            elif line.strip():
                raise DatasetFileError(f"Line {number} is outside a RIS record (no TY tag).")
            continue
        tag, value = match.group(1), check_field((match.group(2) or "").strip(), f"Line {number}")
        if tag == "TY":
            if record is not None:
                raise DatasetFileError(
                    f"RIS record {count} (line {start}) has no ER tag before the next TY."
                )
            record, start = [[tag, value]], number
            count += 1
        elif record is None:
            raise DatasetFileError(f"Line {number} is outside a RIS record (no TY tag).")
        elif tag == "ER":
            yield start, [f"{t}  - {v}" for t, v in record] + ["ER  - "]
            record = None
        else:
            record.append([tag, value])
    if record is not None:
        raise DatasetFileError(
            f"RIS record {count} (line {start}) has no ER tag: the file is truncated."
        )
    if count == 0:
        raise DatasetFileError("The file has no RIS records (no TY tag).")


def ris_flat(entry: dict[str, Any]) -> dict[str, Any]:
    """rispy's entry -> the reader's columns, with the entry itself under RECORD_KEY."""
    if "unknown_tag" in entry:
        entry["unknown_tag"] = dict(entry["unknown_tag"])  # rispy's defaultdict
    notes = [*_values(entry, "notes"), *_values(entry, "note")]
    accession = _first(entry, ("accession_number",))
    pmid = next((m.group(1) for text in (accession, *notes) if (m := _PMID_RE.search(text))), "")
    source = " ".join([*_values(entry, "name_of_database"), *_values(entry, "database_provider")])
    if not pmid and accession.isdigit() and len(accession) <= 9 and _PUBMED_RE.search(source):
        pmid = accession
    year = _YEAR_RE.search(_first(entry, _YEAR))
    return {
        "title": _first(entry, _TITLE),
        "abstract": _first(entry, _ABSTRACT),
        "keywords": list(_values(entry, "keywords")),
        "authors": next((v for k in _AUTHORS if (v := list(_values(entry, k)))), []),
        "year": year.group(1) if year else "",
        "journal": _first(entry, _JOURNAL),
        "doi": _first(entry, ("doi",)),
        "pmid": pmid,
        "id": _first(entry, ("id",)),
        "accession": accession,
        RECORD_KEY: entry,
    }


def _values(entry: dict[str, Any], name: str) -> list[str]:
    value = entry.get(name)
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _first(entry: dict[str, Any], names: tuple[str, ...]) -> str:
    """The first non-empty value among `names`: TI and T1 (or AB and N2) both present repeat
    each other, so the first kept is enough for the columns; the record keeps both."""
    for name in names:
        for value in _values(entry, name):
            if value.strip():
                return value.strip()
    return ""
