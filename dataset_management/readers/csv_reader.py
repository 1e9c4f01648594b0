"""Delimited text (CSV, TSV, semicolon- and pipe-separated), streamed row by row."""

from __future__ import annotations

import csv
from pathlib import Path

from .base import ERROR_KEY, MAX_FIELD_CHARS, RecordStream, check_columns, check_field
from .errors import DatasetFileError

DELIMITERS = ",;\t|"
_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
# One more than the limit, so a field of exactly the limit passes and check_field words the error.
csv.field_size_limit(MAX_FIELD_CHARS + 1)


def sniff_delimiter(sample: str) -> str:
    """Pick the delimiter from the header line first, csv.Sniffer only when that is ambiguous.

    Abstracts are full of commas, so Sniffer's frequency voting over whole rows can pick ','
    for a ';' file; column names almost never contain a delimiter.
    """
    header = sample.split("\n", 1)[0]
    counts = {d: header.count(d) for d in DELIMITERS}
    best = max(counts.values())
    winners = [d for d, n in counts.items() if n == best]
    if best > 0 and len(winners) == 1:
        return winners[0]
    complete = sample[: sample.rfind("\n") + 1] or sample
    try:
        return csv.Sniffer().sniff(complete, delimiters=DELIMITERS).delimiter
    except csv.Error:
        return ","


def read_csv(path: Path, *, encoding: str, delimiter: str | None = None) -> RecordStream:
    f = path.open(encoding=encoding, newline="")
    try:
        if delimiter is None:
            delimiter = sniff_delimiter(f.read(64 * 1024))
            f.seek(0)
        reader = csv.reader(f, delimiter=delimiter, strict=True)
        header = _next_row(reader)
        while header is not None and not any(cell.strip() for cell in header):
            header = _next_row(reader)
        if header is None:
            raise DatasetFileError("The file is empty.")
        columns = check_columns(header)
    except BaseException:
        f.close()
        raise

    def records():
        try:
            while True:
                line = reader.line_num + 1
                row = _next_row(reader, line)
                if row is None:
                    return
                if not row or not any(cell.strip() for cell in row):
                    continue
                for cell in row:
                    check_field(cell, f"Line {line}")
                if len(row) != len(columns):
                    yield line, {ERROR_KEY: f"has {len(row)} fields, expected {len(columns)}"}
                    continue
                yield line, dict(zip(columns, row, strict=True))
        finally:
            f.close()

    fmt = "tsv" if delimiter == "\t" else "csv"
    return RecordStream(
        format=fmt,
        encoding=encoding,
        columns=columns,
        records=records(),
        details={"delimiter": _NAMES[delimiter]},
        close=f.close,
    )


def _next_row(reader, line: int = 1) -> list[str] | None:
    try:
        return next(reader)
    except StopIteration:
        return None
    except UnicodeDecodeError as exc:
        raise DatasetFileError(
            f"Near line {reader.line_num + 1} the file cannot be decoded as {exc.encoding}."
        ) from None
    except csv.Error as exc:
        text = str(exc)
        if "field larger than field limit" in text:
            raise DatasetFileError(
                f"Line {line} has a field larger than 1 MB; the file may have an unclosed quote."
            ) from None
        if "unexpected end of data" in text:
            raise DatasetFileError(
                f"Unbalanced quotes: the quoted field starting on line {line} never ends."
            ) from None
        raise DatasetFileError(f"Line {reader.line_num}: malformed CSV ({text}).") from None
