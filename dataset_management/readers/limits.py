"""An import's caps: how many rows one file may hold, and how large one row may be.

Both are counted on the records every reader streams, so every format and every door (upload
page, API, import_dataset) meets the same refusal, raised at the first record past the cap:
the rest of the file is never parsed, and the caller's clean-up leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.conf import settings

from .base import ERROR_KEY, RECORD_KEY, Record
from .errors import DatasetFileError

# What a record's position counts in each format (the readers' first tuple item); "line" else.
_POSITION_NAMES = {"xlsx": "sheet row", "json": "record", "pubmed_xml": "article"}


class DatasetOverCapError(DatasetFileError):
    """The file passes DATASET_MAX_ROWS or DATASET_MAX_ROW_BYTES: no column choice fixes it."""


def import_caps() -> dict[str, int | None]:
    """The caps an import reads with, as read_records' keyword arguments (0 turns one off)."""
    return {"max_rows": settings.DATASET_MAX_ROWS or None,
            "max_row_bytes": settings.DATASET_MAX_ROW_BYTES or None}


def records_capped(
    records: Iterator[Record], *, file_format: str, max_rows: int | None,
    max_row_bytes: int | None,
) -> Iterator[Record]:
    """`records`, refused with DatasetOverCapError at the first row past either cap."""
    where = _POSITION_NAMES.get(file_format, "line")
    for number, (position, values) in enumerate(records, start=1):
        if max_rows is not None and number > max_rows:
            raise DatasetOverCapError(
                f"This file has more than {max_rows:,} rows (DATASET_MAX_ROWS); split it or "
                f"raise the cap. Reading stopped at row {number:,} ({where} {position:,})."
            )
        if (max_row_bytes is not None and ERROR_KEY not in values
                and row_bytes(values, limit=max_row_bytes) > max_row_bytes):
            raise DatasetOverCapError(
                f"Row {number:,} ({where} {position:,}) is larger than the "
                f"{size_text(max_row_bytes)} one row may hold (DATASET_MAX_ROW_BYTES); the "
                "file may have an unclosed quote: fix it, or raise the cap."
            )
        yield position, values


def row_bytes(values: dict[str, Any], *, limit: int) -> int:
    """The UTF-8 size of a row's values (RECORD_KEY repeats them, so it is skipped), as exact
    as comparing it with `limit` needs.

    Encoding every cell of millions of rows would cost more than reading them: a character is
    1 to 4 bytes, so only a row whose characters leave it in doubt is encoded."""
    cells = [v for k, v in values.items() if k != RECORD_KEY]
    texts = [str(item) for cell in cells
             for item in (cell if isinstance(cell, list) else (cell,))]
    chars = sum(map(len, texts))
    if chars * 4 <= limit or chars > limit:
        return chars
    return sum(len(text.encode("utf-8", "surrogatepass")) for text in texts)


def size_text(size: int) -> str:
    if size >= 1 << 20:
        return f"{size / (1 << 20):,.1f} MB"
    if size >= 1 << 10:
        return f"{size / (1 << 10):,.1f} KB"
    return f"{size:,} bytes"
