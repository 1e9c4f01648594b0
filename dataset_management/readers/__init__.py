"""Readers: one module per file format, all returning a streaming RecordStream.

`read_records` picks the reader from the file's extension, checked against its first bytes
(a workbook renamed to .csv is still read as a workbook; PubMed XML, gzipped or not, is told by
its content alone).
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from .base import ERROR_KEY, MAX_FIELD_CHARS, Record, RecordStream
from .csv_reader import read_csv
from .encoding import UTF8_BOM, detect_encoding
from .errors import DatasetFileError
from .json_reader import read_json, read_jsonl
from .limits import DatasetOverCapError, import_caps, records_capped
from .nbib import read_nbib
from .pubmed_xml import GZIP_MAGIC, read_pubmed_xml
from .ris import read_ris

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
    "xml": "pubmed_xml",
}
# How help texts (form, API, CLI) name what can be uploaded; a new format is added here too.
FORMATS_SENTENCE = ("CSV (any delimiter), TSV, XLSX, JSON, JSONL, RIS, PubMed MEDLINE (.nbib) "
                    "or PubMed XML (.xml, .xml.gz)")
_ZIP_MAGIC = b"PK\x03\x04"
_OLE_MAGIC = b"\xd0\xcf\x11\xe0"  # legacy .xls / .doc
# Other XML (and HTML saved from a search page) is named, not read as a CSV whose header is
# "<?xml"; PubMed's own XML is read.
XML_REFUSED = (f"Of XML, only PubMed's (PubmedArticleSet) is read; other XML and HTML files are "
               f"not: export as {FORMATS_SENTENCE}.")
GZIP_REFUSED = "Of compressed files, only PubMed XML (.xml.gz) is read; unzip the file first."


def sniff_format(path: Path, *, filename: str) -> str:
    with path.open("rb") as f:
        head = f.read(4096)
    if head.startswith(_ZIP_MAGIC):
        return "xlsx"
    if head.startswith(GZIP_MAGIC):
        return _gzip_format(path)
    if head.startswith(_OLE_MAGIC):
        raise DatasetFileError("Legacy .xls workbooks are not supported: save it as .xlsx or CSV.")
    ext = filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    fmt = _BY_EXTENSION.get(ext)
    if fmt == "xlsx":
        raise DatasetFileError("The file is not a valid XLSX workbook.")
    text = head.removeprefix(UTF8_BOM).lstrip()
    if _is_xml(text, ext=ext):
        return _xml_format(text)
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


def _is_xml(text: bytes, *, ext: str) -> bool:
    return text.startswith((b"<?xml", b"<!DOCTYPE", b"<!doctype", b"<PubmedArticleSet")) or (
        ext == "xml") or (text.startswith(b"<") and b"pubmedarticle" in text.lower())


def _xml_format(text: bytes) -> str:
    """PubMed XML by its DOCTYPE or root (PubmedArticleSet) in the first bytes; any other XML
    is refused by name, before a reader would report its "<?xml" line as a header."""
    if b"pubmedarticleset" in text.lower():
        return "pubmed_xml"
    raise DatasetFileError(XML_REFUSED)


def _gzip_format(path: Path) -> str:
    """A gzip file is read only when it holds PubMed XML, told by its first inflated bytes."""
    try:
        with gzip.open(path, "rb") as f:
            head = f.read(4096)
    except (OSError, EOFError, zlib.error) as error:
        raise DatasetFileError(f"The .gz file is damaged: {error}.") from None
    text = head.removeprefix(UTF8_BOM).lstrip()
    if _is_xml(text, ext="") and b"pubmedarticleset" in text.lower():
        return "pubmed_xml"
    raise DatasetFileError(GZIP_REFUSED)


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
        # openpyxl is imported only for a workbook: its import costs the web, the workers and
        # every manage.py command about a second of CPU at start-up.
        from .xlsx import read_xlsx

        return read_xlsx(path)
    if fmt == "pubmed_xml":
        return read_pubmed_xml(path)  # XML declares its own encoding
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
