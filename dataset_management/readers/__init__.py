"""Readers: one module per file format, all returning a streaming RecordStream.

`read_records` picks the reader from the file's extension, checked against its first bytes
(a workbook renamed to .csv is still read as a workbook).
"""

from __future__ import annotations

from pathlib import Path

from .base import ERROR_KEY, MAX_FIELD_CHARS, Record, RecordStream
from .csv_reader import read_csv
from .encoding import UTF8_BOM, detect_encoding
from .errors import DatasetFileError
from .json_reader import read_json, read_jsonl
from .limits import DatasetOverCapError, import_caps, records_capped
from .nbib import read_nbib
from .ris import read_ris
from .xlsx import read_xlsx

__all__ = [
    "ERROR_KEY",
    "FORMATS_SENTENCE",
    "MAX_FIELD_CHARS",
    "DatasetFileError",
    "DatasetOverCapError",
    "Record",
    "RecordStream",
    "import_caps",
    "read_records",
    "sniff_format",
]

_BY_EXTENSION = {
    "csv": "csv",
    "tsv": "tsv",
    "tab": "tsv",
    "xlsx": "xlsx",
    "json": "json",
    "jsonl": "jsonl",
    "ndjson": "jsonl",
    "ris": "ris",
    "nbib": "nbib",
    "medline": "nbib",
}
# How help texts (form, API, CLI) name what can be uploaded; a new format is added here too.
FORMATS_SENTENCE = "CSV (any delimiter), TSV, XLSX, JSON, JSONL, RIS or PubMed MEDLINE (.nbib)"
_ZIP_MAGIC = b"PK\x03\x04"
_OLE_MAGIC = b"\xd0\xcf\x11\xe0"  # legacy .xls / .doc
# PubMed's "Save > XML" and efetch's output; named, not read as a CSV whose header is "<?xml".
PUBMED_XML_REFUSED = (
    "PubMed XML is not supported yet; export as RIS or CSV, or in PubMed use Send to > "
    "Citation manager (a .nbib file), which is read."
)
XML_REFUSED = f"XML and HTML files are not supported; export as {FORMATS_SENTENCE}."


def sniff_format(path: Path, *, filename: str) -> str:
    with path.open("rb") as f:
        head = f.read(4096)
    if head.startswith(_ZIP_MAGIC):
        return "xlsx"
    if head.startswith(_OLE_MAGIC):
        raise DatasetFileError("Legacy .xls workbooks are not supported: save it as .xlsx or CSV.")
    ext = filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    fmt = _BY_EXTENSION.get(ext)
    if fmt == "xlsx":
        raise DatasetFileError("The file is not a valid XLSX workbook.")
    text = head.removeprefix(UTF8_BOM).lstrip()
    _refuse_xml(text, ext=ext)
    # A .csv that starts with "[" was saved by a tool that picked the wrong extension.
    if fmt and not (fmt == "csv" and text[:1] in (b"[", b"{")):
        return fmt
    if text.startswith(b"["):
        return "json"
    if text.startswith(b"{"):
        return "jsonl"
    if text.startswith(b"TY  -"):
        return "ris"
    if text.startswith(b"PMID-"):
        return "nbib"
    return "tsv" if ext in ("tsv", "tab") else "csv"


def _refuse_xml(text: bytes, *, ext: str) -> None:
    """An XML file (by its first bytes or its extension) is refused by name, before any reader
    would report its "<?xml" line as a header with no text column."""
    if not (text.startswith(b"<") or ext == "xml"):
        return
    if b"pubmedarticle" in text.lower():  # the root (PubmedArticleSet) or its DOCTYPE
        raise DatasetFileError(PUBMED_XML_REFUSED)
    if text.startswith((b"<?xml", b"<!DOCTYPE", b"<!doctype")) or ext == "xml":
        raise DatasetFileError(XML_REFUSED)


def read_records(
    path: str | Path, *, filename: str, max_rows: int | None = None,
    max_row_bytes: int | None = None,
) -> RecordStream:
    """Open `path` (uploaded as `filename`) and stream its records; DatasetFileError if not.

    With `max_rows` or `max_row_bytes` (an import's, from import_caps()), the stream stops with
    DatasetOverCapError at the first record past either."""
    path = Path(path)
    if path.stat().st_size == 0:
        raise DatasetFileError("The file is empty.")
    stream = _open_stream(path, filename=filename)
    if max_rows is not None or max_row_bytes is not None:
        stream.records = records_capped(stream.records, file_format=stream.format,
                                        max_rows=max_rows, max_row_bytes=max_row_bytes)
    return stream


def _open_stream(path: Path, *, filename: str) -> RecordStream:
    fmt = sniff_format(path, filename=filename)
    if fmt == "xlsx":
        return read_xlsx(path)
    encoding, how = detect_encoding(path)
    stream = {
        "csv": lambda: read_csv(path, encoding=encoding),
        "tsv": lambda: read_csv(path, encoding=encoding, delimiter="\t"),
        "json": lambda: read_json(path, encoding=encoding),
        "jsonl": lambda: read_jsonl(path, encoding=encoding),
        "ris": lambda: read_ris(path, encoding=encoding),
        "nbib": lambda: read_nbib(path, encoding=encoding),
    }[fmt]()
    stream.details["encoding_detection"] = how
    return stream
