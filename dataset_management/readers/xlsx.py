"""Excel workbooks (first sheet), read with openpyxl's streaming read-only mode.

Memory budget for reading one workbook: about 200 MB above the process's baseline at worst,
whatever the file holds (docs/contracts.md, "Limits"). Its parts:
- shared strings on disk, not in a list (xlsx_strings.py): at most 24 MB of index and cache;
- the sheet streamed row by row; openpyxl still keeps about 100 bytes per row read, so reading
  stops at Excel's own MAX_ROWS (about 105 MB there);
- the parts openpyxl parses whole (workbook, styles, theme, properties, relationships) are
  refused past MAX_WHOLE_PART_BYTES each (4 MB of styles.xml parse into about 46 MB).
Measured: 400 MB of shared strings over 235,000 rows peaked 26 MB above the baseline (484 MB
with openpyxl's own table); 1,048,575 rows of numbers, 103 MB.
"""

from __future__ import annotations

import datetime as dt
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from openpyxl.reader.excel import ExcelReader
from openpyxl.xml.constants import SHARED_STRINGS

from core.diskspace import is_disk_full

from .base import ERROR_KEY, Record, RecordStream, check_columns, check_field
from .bounded import BoundedReader, decompressed_over_limit_message, max_decompressed_bytes
from .errors import DatasetFileError, name_shown
from .xlsx_strings import SharedStrings

# An XLSX is a zip of XML; real spreadsheets compress about 5-20x. The ratio, and the total
# against DATASET_MAX_DECOMPRESSED_MB, are checked on the sizes the zip declares, before anything
# is unzipped; zipfile stops every part at its declared size as it inflates (and its CRC check
# refuses one that lies), so the declared total bounds what is read. They bound the disk the
# shared strings may take; memory is bounded by reading each part through bounded.py's reader.
MAX_COMPRESSION_RATIO = 100
# openpyxl parses these parts whole into objects (about ten times their size in memory); real
# ones are kilobytes, a heavily styled workbook's styles.xml a few MB.
MAX_WHOLE_PART_BYTES = 4 * 1024 * 1024
# Excel cannot write more rows; a sheet claiming more is damaged or built to exhaust memory.
MAX_ROWS = 1_048_576
_WHOLE_PARTS = ("[Content_Types].xml", "xl/workbook.xml", "xl/styles.xml")
_WHOLE_FOLDERS = ("docProps/", "xl/theme/")


def check_zip(path: Path) -> None:
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, OSError):
        raise DatasetFileError("The file is not a valid XLSX workbook.") from None
    expanded = sum(info.file_size for info in infos)
    packed = sum(info.compress_size for info in infos) or 1
    ratio = expanded / packed
    if expanded > max_decompressed_bytes():
        raise DatasetFileError(decompressed_over_limit_message(max_decompressed_bytes()))
    if ratio > MAX_COMPRESSION_RATIO and expanded > 1 << 24:
        raise DatasetFileError(
            f"The XLSX file would expand to {expanded // (1024 * 1024)} MB when unzipped: "
            "refusing to open a likely zip bomb."
        )
    if not any(info.filename == "xl/workbook.xml" for info in infos):
        raise DatasetFileError("The file is a zip archive but not an XLSX workbook.")
    for info in infos:
        name = info.filename
        read_whole = (name in _WHOLE_PARTS or name.endswith(".rels")
                      or (name.startswith(_WHOLE_FOLDERS) and name.endswith(".xml")))
        if read_whole and info.file_size > MAX_WHOLE_PART_BYTES:
            raise DatasetFileError(
                f"The workbook's part {name_shown(name)} is {info.file_size // 2**20} MB "
                f"unzipped; the limit is {MAX_WHOLE_PART_BYTES // 2**20} MB. Save the sheet as "
                "CSV and upload that instead."
            )


class _Reader(ExcelReader):
    """openpyxl's reader, with the shared strings spooled to disk instead of held in a list."""

    def __init__(self, f: IO[bytes], *, spool_dir: Path) -> None:
        # keep_links=False: external-link parts are never needed to read cell values.
        super().__init__(f, read_only=True, data_only=True, keep_links=False)
        self.spool_dir = spool_dir

    def read_strings(self) -> None:
        ct = self.package.find(SHARED_STRINGS)
        if ct is not None:
            with self.archive.open(ct.PartName[1:]) as src:
                self.shared_strings = SharedStrings(BoundedReader(src, max_bytes=None),
                                                    spool_dir=self.spool_dir)


class _BoundedArchive:
    """The workbook's zip as openpyxl's read-only sheets open it (workbook._archive): each sheet
    is read through BoundedReader, so one inline-string cell of a gigabyte is refused at
    MAX_TEXT_NODE_BYTES instead of being parsed whole into memory."""

    def __init__(self, archive: zipfile.ZipFile) -> None:
        self.archive = archive

    def open(self, name: str, *args: Any, **kwargs: Any) -> BoundedReader:
        return BoundedReader(self.archive.open(name, *args, **kwargs), max_bytes=None)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.archive, name)


def read_xlsx(path: Path) -> RecordStream:
    check_zip(path)
    reader, close = _workbook_open(path)
    try:
        rows = reader.wb.worksheets[0].iter_rows(values_only=True)
        line, columns = _header(rows)
    except BaseException:
        close()
        raise
    records = _records(rows, after=line, columns=columns, close=close)
    return RecordStream("xlsx", "", columns, records, {"sheet": reader.wb.sheetnames[0]}, close)


def _workbook_open(path: Path) -> tuple[_Reader, Callable[[], None]]:
    """The workbook, read as far as its sheets, and what closes it and its spooled strings."""
    # A file object, not the path: openpyxl refuses paths whose name does not end in .xlsx,
    # and the upload is spooled under a neutral name.
    f = path.open("rb")
    reader: _Reader | None = None

    def close() -> None:
        if reader is not None:
            if isinstance(reader.shared_strings, SharedStrings):
                reader.shared_strings.close()
            reader.archive.close()
        f.close()

    try:
        reader = _Reader(f, spool_dir=path.parent)
        reader.read()
        reader.wb._archive = _BoundedArchive(reader.archive)
    except DatasetFileError:
        close()
        raise
    except Exception as exc:  # openpyxl raises many types for a corrupt workbook
        close()
        if is_disk_full(exc):  # the spooled strings filled the disk: not the file's fault
            raise
        raise DatasetFileError("The file is not a valid XLSX workbook.") from None
    return reader, close


def _header(rows: Iterator[tuple[Any, ...]]) -> tuple[int, list[str]]:
    """The first non-empty row's line number and its named columns."""
    for line, values in enumerate(rows, start=1):
        _check_row_number(line)
        if any(_cell(v) for v in values):
            # Trailing empty header cells are formatting, not columns.
            width = max(i for i, v in enumerate(values, start=1) if _cell(v))
            return line, check_columns([_cell(v) for v in values[:width]])
    raise DatasetFileError("The file is empty.")


def _records(rows: Iterator[tuple[Any, ...]], *, after: int, columns: list[str],
             close: Callable[[], None]) -> Iterator[Record]:
    """The rows below the header as records; the workbook is closed once they are read."""
    number, width = after, len(columns)
    try:
        for values in rows:
            number += 1
            _check_row_number(number)
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


def _check_row_number(number: int) -> None:
    if number > MAX_ROWS:
        raise DatasetFileError(
            f"The sheet goes on past row {MAX_ROWS:,}, more than Excel allows: the file is "
            "damaged."
        )


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    return str(value).strip()
