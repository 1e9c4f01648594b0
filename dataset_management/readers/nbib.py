"""PubMed MEDLINE (.nbib / .txt export): PMID- starts a record, 6-space lines continue a field."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from .base import Record, RecordStream, check_field
from .errors import DatasetFileError

# MeSH headings are not auto-detected as labels: a MEDLINE record has a dozen, so they make a
# label space of thousands. Map `mesh_headings` as the label column to use them.
COLUMNS = ["pmid", "title", "abstract", "mesh_headings"]
_TAG = re.compile(r"^([A-Z]{1,4}) *- (.*)$")


def read_nbib(path: Path, *, encoding: str) -> RecordStream:
    f = path.open(encoding=encoding)

    def records() -> Iterator[Record]:
        try:
            yield from _parse(f)
        finally:
            f.close()

    return RecordStream("nbib", encoding, list(COLUMNS), records(), close=f.close)


def _parse(lines) -> Iterator[Record]:
    record: dict | None = None
    start = 0
    last: str | None = None
    count = 0
    for number, raw in enumerate(lines, start=1):
        line = raw.lstrip("\ufeff").rstrip("\r\n")
        if line.startswith("      ") and record is not None and last is not None:
            _append(record, last, line.strip())
            continue
        match = _TAG.match(line)
        if not match:
            if line.strip():
                raise DatasetFileError(f"Line {number} is not a MEDLINE field (TAG - value).")
            continue
        tag, value = match.group(1), match.group(2).strip()
        if tag == "PMID":
            if record is not None:
                yield start, record
            record = {"pmid": value, "title": "", "abstract": "", "mesh_headings": []}
            start, last = number, None
            count += 1
        elif record is None:
            raise DatasetFileError(f"Line {number} comes before the first PMID- line.")
        elif tag in ("TI", "AB"):
            last = "title" if tag == "TI" else "abstract"
            record[last] = check_field(value, f"Line {number}")
        elif tag == "MH":
            # "Heart Failure/*therapy": the descriptor is the label, the subheading is not.
            record["mesh_headings"].append(value.split("/", 1)[0].lstrip("*").strip())
            last = None
        else:
            last = None
    if record is not None:
        yield start, record
    if count == 0:
        raise DatasetFileError("The file has no MEDLINE records (no PMID- line).")


def _append(record: dict, key: str, text: str) -> None:
    record[key] = check_field(f"{record[key]} {text}", "A MEDLINE field")
