"""CSV export that spreadsheet programs cannot execute (CSV / formula injection).

Stored data stays verbatim; only what leaves as CSV is neutralised, at the last moment.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import IO, Any

# A cell starting with one of these is a formula to Excel/LibreOffice/Sheets ("=HYPERLINK(...)"),
# including after leading tab/CR, which some programs strip.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")


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
