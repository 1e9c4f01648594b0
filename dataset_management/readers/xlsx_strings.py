"""A workbook's shared strings kept in a temporary file instead of a list in memory.

openpyxl reads xl/sharedStrings.xml whole into a Python list before the first row, even in
read-only mode: a 64 MB workbook holding 400 MB of text took the web process from 368 MB to
1.5 GB. Here the part is parsed with expat as it unzips, each string's UTF-8 bytes go to an
unlinked temporary file, and only its end offset stays in memory; a cell's string is read
back when the sheet refers to it.

Memory budget, whatever the workbook's size: the offset index (4 bytes a string, at most
MAX_SHARED_STRINGS: 16 MB), the cache of short strings (CACHE_ENTRIES of at most CACHE_CHARS
characters: about 8 MB), expat's text buffer (64 KB) and one string read back (the reader
refuses a cell over MAX_FIELD_CHARS before decoding it).
"""

from __future__ import annotations

import os
import tempfile
from array import array
from pathlib import Path
from typing import IO
from xml.parsers import expat

from .base import MAX_FIELD_CHARS
from .errors import DatasetFileError

MAX_SHARED_STRINGS = 4_000_000
# Labels, journals and years repeat on every row; abstracts are read once each. Caching only
# short strings keeps repeats fast without ever caching the long ones.
CACHE_CHARS = 200
CACHE_ENTRIES = 20_000
# zipfile holds several times the size asked for while it inflates: keep the reads small.
_READ_CHUNK = 64 * 1024
# sst > si > t (plain text) and sst > si > r > t (a formatted run); rPh (phonetic hints) is
# not part of the text, as in openpyxl.
_TEXT_PATHS = (("sst", "si", "t"), ("sst", "si", "r", "t"))
# No element of a shared-strings part nests deeper; a deeper one is not a workbook.
_MAX_DEPTH = 8
_NOT_A_WORKBOOK = "The file is not a valid XLSX workbook."


class SharedStrings:
    """The strings of one sharedStrings.xml, by index, read back from an unlinked file."""

    def __init__(self, source: IO[bytes], *, spool_dir: Path) -> None:
        # Unlinked at once: nothing is left on disk even if the process is killed.
        self._file = tempfile.TemporaryFile(dir=spool_dir)  # noqa: SIM115 - closed by close()
        self._ends = array("I")
        self._written = 0
        self._path: list[str] = []
        self._capturing = False
        self._cache: dict[int, str] = {}
        try:
            self._parse(source)
        except BaseException:
            self.close()
            raise

    def _parse(self, source: IO[bytes]) -> None:
        parser = expat.ParserCreate(namespace_separator=" ")
        parser.buffer_text = True
        parser.buffer_size = 64 * 1024
        parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        parser.StartDoctypeDeclHandler = self._refuse_doctype
        parser.StartElementHandler = self._start
        parser.EndElementHandler = self._end
        parser.CharacterDataHandler = self._text
        try:
            while chunk := source.read(_READ_CHUNK):
                parser.Parse(chunk, False)
            parser.Parse(b"", True)
        except expat.ExpatError:
            raise DatasetFileError(_NOT_A_WORKBOOK) from None
        self._file.flush()

    def _refuse_doctype(self, *_: object) -> None:
        # Excel never writes one; a DTD is how entity-expansion bombs get in.
        raise DatasetFileError(_NOT_A_WORKBOOK)

    def _start(self, name: str, _attrs: object) -> None:
        self._path.append(name.rpartition(" ")[2])
        if len(self._path) > _MAX_DEPTH:
            raise DatasetFileError(_NOT_A_WORKBOOK)
        self._capturing = tuple(self._path) in _TEXT_PATHS

    def _end(self, _name: str) -> None:
        if len(self._path) == 2 and self._path[1] == "si":
            if len(self._ends) >= MAX_SHARED_STRINGS:
                raise DatasetFileError(
                    f"The workbook holds more than {MAX_SHARED_STRINGS:,} distinct texts; "
                    "save it as CSV and upload that instead."
                )
            self._ends.append(self._written)
        self._path.pop()
        self._capturing = False

    def _text(self, data: str) -> None:
        if self._capturing:
            raw = data.encode("utf-8")
            if self._written + len(raw) >= 1 << 32:  # past what the 4-byte index can hold
                raise DatasetFileError(_NOT_A_WORKBOOK)
            self._file.write(raw)
            self._written += len(raw)

    def __len__(self) -> int:
        return len(self._ends)

    def __getitem__(self, index: int) -> str:
        cached = self._cache.get(index)
        if cached is not None:
            return cached
        if not 0 <= index < len(self._ends):
            raise DatasetFileError(
                "The workbook refers to a text it does not hold: the file is damaged."
            )
        start = self._ends[index - 1] if index else 0
        size = self._ends[index] - start
        # UTF-8 needs at least one byte a character: past this it cannot pass check_field.
        if size > 4 * MAX_FIELD_CHARS:
            raise DatasetFileError(
                "A cell of the workbook holds more than 1 MB of text; the file may be damaged."
            )
        # As openpyxl's own reader does: Excel's escape for a literal "_x" sequence.
        text = os.pread(self._file.fileno(), size, start).decode("utf-8").replace("x005F_", "")
        if len(text) <= CACHE_CHARS:
            if len(self._cache) >= CACHE_ENTRIES:
                self._cache.clear()
            self._cache[index] = text
        return text

    def close(self) -> None:
        self._cache.clear()
        self._file.close()
