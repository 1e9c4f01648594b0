"""What every reader returns: the columns up front, then the records one at a time."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .errors import DatasetFileError, name_shown

# A record: its position in the source (line or record number, 1-based, for error messages)
# and its values by column. Values are str, or list[str] for multi-valued fields (RIS KW).
Record = tuple[int, dict[str, Any]]
# A record that could not be parsed but should not stop the import carries only this key, whose
# value is the reason; the importer counts it as a dropped row.
ERROR_KEY = "__error__"
# RIS and MEDLINE records carry, beside their flat columns, the whole record as the source holds
# it under this key, so an export can give every original field back (dataset_management.articles).
RECORD_KEY = "__record__"

# Python's csv default is 128 KB; a real abstract is a few KB, so 1 MB in one field means an
# unclosed quote or a file that is not what it claims to be.
MAX_FIELD_CHARS = 1024 * 1024
# PostgreSQL cannot store U+0000 in text or JSON (a 500 at save), SQLite would keep it inside
# label names; no article needs one, so a file holding one is refused, naming where. Raw NUL
# bytes in text files are caught earlier (encoding.py); this catches JSON's \u0000 escape and
# any reader that builds text some other way.
NUL_REASON = "contains a NUL character (U+0000), which no text needs; remove it and upload again."


@dataclass
class RecordStream:
    format: str
    encoding: str
    columns: list[str]
    records: Iterator[Record]
    details: dict[str, Any] = field(default_factory=dict)
    close: Callable[[], None] = lambda: None

    def __enter__(self) -> RecordStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_columns(columns: list[str]) -> list[str]:
    """Strip header names, name blank ones, and refuse names that clash (case-insensitively)."""
    cleaned: list[str] = []
    seen: dict[str, str] = {}
    for i, raw in enumerate(columns, start=1):
        name = str(raw if raw is not None else "").strip() or f"column_{i}"
        if "\x00" in name:
            raise DatasetFileError(f"Column {i} of the header {NUL_REASON}")
        key = name.casefold()
        if key in seen:
            raise DatasetFileError(f"Duplicate column name '{name_shown(name)}' in the header.")
        seen[key] = name
        cleaned.append(name)
    return cleaned


def check_field(value: str, where: str) -> str:
    if len(value) > MAX_FIELD_CHARS:
        raise DatasetFileError(
            f"{where} has a field larger than 1 MB; the file may have an unclosed quote."
        )
    if "\x00" in value:
        raise DatasetFileError(f"{where} {NUL_REASON}")
    return value


def cell_text(value: Any) -> str:
    """A cell as one line of text: None is empty, a list (JSON, RIS keywords) is joined."""
    if value is None:
        return ""
    if isinstance(value, list):
        return " ".join(str(v) for v in value).strip()
    return str(value).strip()
