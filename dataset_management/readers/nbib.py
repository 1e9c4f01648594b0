"""PubMed MEDLINE (.nbib / .txt export): PMID- starts a record, 6-space lines continue a field.

Hand-written: rispy reads RIS only, and MEDLINE's tags (up to four letters, "TAG - value") are
not RIS's. Every field is kept, in order, as the record's original (tag -> values), so an export
can give it back; the flat columns are what import and classification need.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from .base import RECORD_KEY, Record, RecordStream, check_field
from .errors import DatasetFileError

# MeSH headings are not auto-detected as labels: a MEDLINE record has a dozen, so they make a
# label space of thousands. Map `mesh_headings` as the label column to use them.
COLUMNS = ["pmid", "title", "abstract", "mesh_headings", "authors", "year", "journal", "doi"]
_TAG = re.compile(r"^([A-Z]{1,4}) *- (.*)$")
_DOI = re.compile(r"^(\S+)\s+\[doi\]$")
_YEAR = re.compile(r"\b(1[5-9]\d\d|2[01]\d\d)\b")


def read_nbib(path: Path, *, encoding: str) -> RecordStream:
    f = path.open(encoding=encoding)

    def records() -> Iterator[Record]:
        try:
            for start, fields in _parse(f):
                yield start, medline_flat(fields)
        finally:
            f.close()

    return RecordStream("nbib", encoding, list(COLUMNS), records(), close=f.close)


def _parse(lines) -> Iterator[tuple[int, dict[str, list[str]]]]:
    """Each record's first line number and its fields (tag -> values, in file order)."""
    record: dict[str, list[str]] | None = None
    start = 0
    last: list[str] | None = None  # the values list the previous tag appended to
    count = 0
    for number, raw in enumerate(lines, start=1):
        line = raw.lstrip("\ufeff").rstrip("\r\n")
        if line.startswith("      ") and last is not None:
            last[-1] = check_field(f"{last[-1]} {line.strip()}".strip(), f"Line {number}")
            continue
        match = _TAG.match(line)
        if not match:
            if line.strip():
                raise DatasetFileError(f"Line {number} is not a MEDLINE field (TAG - value).")
            continue
        tag, value = match.group(1), check_field(match.group(2).strip(), f"Line {number}")
        if tag == "PMID":
            if record is not None:
                yield start, record
            record, start = {}, number
            count += 1
        elif record is None:
            raise DatasetFileError(f"Line {number} comes before the first PMID- line.")
        last = record.setdefault(tag, [])
        last.append(value)
    if record is not None:
        yield start, record
    if count == 0:
        raise DatasetFileError("The file has no MEDLINE records (no PMID- line).")


def medline_flat(fields: dict[str, list[str]]) -> dict:
    """A MEDLINE record's fields -> the reader's columns, the fields kept under RECORD_KEY."""
    doi = next((m.group(1) for tag in ("AID", "LID") for value in fields.get(tag, ())
                if (m := _DOI.match(value))), "")
    year = _YEAR.search(_first(fields, "DP"))
    return {
        "pmid": _first(fields, "PMID"),
        "title": _first(fields, "TI"),
        "abstract": _first(fields, "AB"),
        # "Heart Failure/*therapy": the descriptor is the label, the subheading is not.
        "mesh_headings": [v.split("/", 1)[0].lstrip("*").strip() for v in fields.get("MH", ())],
        # Full names ("Smith, John") as reference managers write them; initials when absent.
        "authors": list(fields.get("FAU") or fields.get("AU") or ()),
        "year": year.group(1) if year else "",
        "journal": _first(fields, "JT") or _first(fields, "TA"),
        "doi": doi,
        RECORD_KEY: fields,
    }


def _first(fields: dict[str, list[str]], tag: str) -> str:
    return next((v for v in fields.get(tag, ()) if v), "")
