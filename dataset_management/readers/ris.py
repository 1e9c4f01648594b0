"""RIS (reference managers' export): TY starts a record, ER ends it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from .base import Record, RecordStream, check_field
from .errors import DatasetFileError

COLUMNS = ["title", "abstract", "keywords"]
_TAG = re.compile(r"^([A-Z][A-Z0-9])  -(?: (.*))?$")
_FIELDS = {"TI": "title", "T1": "title", "AB": "abstract", "N2": "abstract"}


def read_ris(path: Path, *, encoding: str) -> RecordStream:
    f = path.open(encoding=encoding)

    def records() -> Iterator[Record]:
        try:
            yield from _parse(f)
        finally:
            f.close()

    return RecordStream("ris", encoding, list(COLUMNS), records(), close=f.close)


def _parse(lines) -> Iterator[Record]:
    record: dict | None = None
    start = number = 0
    last: str | None = None
    count = 0
    for number, raw in enumerate(lines, start=1):
        line = raw.lstrip("\ufeff").rstrip("\r\n")
        match = _TAG.match(line)
        if not match:
            if line.strip() and record is not None and last is not None:
                # A continuation line wraps the previous tag's value.
                _append(record, last, line.strip())
            elif line.strip():
                raise DatasetFileError(f"Line {number} is outside a RIS record (no TY tag).")
            continue
        tag, value = match.group(1), (match.group(2) or "").strip()
        if tag == "TY":
            if record is not None:
                raise DatasetFileError(
                    f"RIS record {count} (line {start}) has no ER tag before the next TY."
                )
            record, start, last = {"title": "", "abstract": "", "keywords": []}, number, None
            count += 1
        elif record is None:
            raise DatasetFileError(f"Line {number} is outside a RIS record (no TY tag).")
        elif tag == "ER":
            yield start, record
            record = None
        elif tag == "KW":
            record["keywords"].append(value)
            last = "keywords"
        elif tag in _FIELDS:
            last = _FIELDS[tag]
            # TI and T1 (or AB and N2) both present: keep the first, they repeat each other.
            if not record[last]:
                record[last] = check_field(value, f"Line {number}")
        else:
            last = None
    if record is not None:
        raise DatasetFileError(
            f"RIS record {count} (line {start}) has no ER tag: the file is truncated."
        )
    if count == 0:
        raise DatasetFileError("The file has no RIS records (no TY tag).")


def _append(record: dict, key: str, text: str) -> None:
    if key == "keywords":
        record[key][-1] = f"{record[key][-1]} {text}"
    else:
        record[key] = check_field(f"{record[key]} {text}", "A RIS field")
