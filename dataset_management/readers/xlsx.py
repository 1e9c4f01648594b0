"""Excel workbooks (first sheet), read with openpyxl's streaming read-only mode."""

from __future__ import annotations

import datetime as dt
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from openpyxl import load_workbook

from .base import ERROR_KEY, Record, RecordStream, check_columns, check_field
from .errors import DatasetFileError

# An XLSX is a zip of XML; real spreadsheets compress about 5-20x. Both limits must be passed
# before openpyxl unzips anything, because its shared-strings table is read whole into memory.
MAX_UNCOMPRESSED_BYTES = 1024 * 1024 * 1024
MAX_COMPRESSION_RATIO = 100


def check_zip(path: Path) -> None:
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, OSError):
        raise DatasetFileError("The file is not a valid XLSX workbook.") from None
    expanded = sum(info.file_size for info in infos)
    packed = sum(info.compress_size for info in infos) or 1
    ratio = expanded / packed
    if expanded > MAX_UNCOMPRESSED_BYTES or (ratio > MAX_COMPRESSION_RATIO and expanded > 1 << 24):
        raise DatasetFileError(
            f"The XLSX file would expand to {expanded // (1024 * 1024)} MB when unzipped: "
            "refusing to open a likely zip bomb."
        )
    if not any(info.filename == "xl/workbook.xml" for info in infos):
        raise DatasetFileError("The file is a zip archive but not an XLSX workbook.")


def read_xlsx(path: Path) -> RecordStream:
    check_zip(path)
    # A file object, not the path: openpyxl refuses paths whose name does not end in .xlsx,
    # and the upload is spooled under a neutral name.
    f = path.open("rb")
    try:
        wb = load_workbook(f, read_only=True, data_only=True)
    except Exception:  # openpyxl raises many types for a corrupt workbook
        f.close()
        raise DatasetFileError("The file is not a valid XLSX workbook.") from None

    def close() -> None:
        wb.close()
        f.close()

    try:
        rows = wb.worksheets[0].iter_rows(values_only=True)
        header: tuple[Any, ...] | None = None
        line = 0
        for values in rows:
            line += 1
            if any(_cell(v) for v in values):
                header = values
                break
        if header is None:
            raise DatasetFileError("The file is empty.")
        # Trailing empty header cells are formatting, not columns.
        width = max(i for i, v in enumerate(header, start=1) if _cell(v))
        columns = check_columns([_cell(v) for v in header[:width]])
    except BaseException:
        close()
        raise

    def records() -> Iterator[Record]:
        number = line
        try:
            for values in rows:
                number += 1
                cells = [_cell(v) for v in values]
                if not any(cells):
                    continue
                if any(cells[width:]):
                    yield number, {ERROR_KEY: f"has values beyond the {width} named columns"}
                    continue
                cells = (cells + [""] * width)[:width]
                for cell in cells:
                    check_field(cell, f"Row {number}")
                yield number, dict(zip(columns, cells, strict=True))
        finally:
            close()

    return RecordStream("xlsx", "", columns, records(), {"sheet": wb.sheetnames[0]}, close)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    return str(value).strip()
