"""Bounds on what a compressed or markup file may expand to, counted while it streams.

A 2 MB .xml.gz can hold 2 GiB of spaces: the upload cap (MAX_UPLOAD_SIZE) counts the compressed
bytes only, and an XML parser keeps a whole text node in memory before it hands it over, so such
a file took a web process to 2.3 GB. Here every byte a reader inflates is counted as it is read:
- the whole stream stops at DATASET_MAX_DECOMPRESSED_MB (default ten times MAX_UPLOAD_SIZE_MB:
  real PubMed XML compresses about 8-10x);
- a run of text with no markup in it (one text node, or a tag) stops at MAX_TEXT_NODE_BYTES,
  so the parser never holds more than that of one node, whatever the total allows.
Both raise DatasetFileError naming the limit; the import's clean-up then leaves nothing behind.
"""

from __future__ import annotations

from typing import BinaryIO

from django.conf import settings

from .base import MAX_FIELD_CHARS
from .errors import DatasetFileError

# A field may hold MAX_FIELD_CHARS characters, up to 4 bytes each in UTF-8: a text node longer
# than this cannot become a field that check_field accepts, so it is refused before it is whole.
MAX_TEXT_NODE_BYTES = 4 * MAX_FIELD_CHARS


def max_decompressed_bytes() -> int:
    """DATASET_MAX_DECOMPRESSED_MB in bytes (settings.py ties its default to the upload cap)."""
    return int(settings.DATASET_MAX_DECOMPRESSED_MB) * 1024 * 1024


def decompressed_over_limit_message(limit: int) -> str:
    return (f"The file expands to more than {limit / 2**20:,.0f} MB when decompressed, the limit "
            "(DATASET_MAX_DECOMPRESSED_MB); it is refused as a likely decompression bomb. "
            "Nothing was kept.")


def text_node_over_limit_message(*, offset: int, where: str) -> str:
    return (f"The XML holds a text of more than {MAX_TEXT_NODE_BYTES // 2**20} MB without markup "
            f"({where}, at byte {offset:,} of the XML), past the limit for one text node: the "
            "file is damaged or built to fill memory. Nothing was kept.")


class BoundedReader:
    """A read()-able view of `stream` (decompressed bytes) that counts what it hands over.

    `max_bytes` (None: no total) bounds the whole stream; `max_run` (markup only: None for
    other text) bounds the bytes between two "<", i.e. one text node, attribute or tag.
    `where()` names the position for the message (the reader's last record)."""

    def __init__(self, stream: BinaryIO, *, max_bytes: int | None,
                 max_run: int | None = MAX_TEXT_NODE_BYTES, where: str = "") -> None:
        self.stream = stream
        self.max_bytes = max_bytes
        self.max_run = max_run
        self.where = where or "at its start"
        self.count = 0
        self._run = 0

    def read(self, size: int = 1 << 16) -> bytes:
        data = self.stream.read(size)
        self.count += len(data)
        if self.max_bytes is not None and self.count > self.max_bytes:
            raise DatasetFileError(decompressed_over_limit_message(self.max_bytes))
        if self.max_run is not None and data:
            self._count_run(data)
        return data

    def _count_run(self, data: bytes) -> None:
        if len(data) > self.max_run and max(map(len, data.split(b"<"))) > self.max_run:
            self._refuse()  # a caller reading more than max_run at once: look inside too
        first = data.find(b"<")
        if first < 0:
            self._run += len(data)
        else:
            # The run that ended at this chunk's first "<" is checked; a run wholly inside one
            # chunk is shorter than the chunk, so only the one still open at its end counts on.
            if self._run + first > self.max_run:
                self._refuse()
            self._run = len(data) - data.rfind(b"<") - 1
        if self._run > self.max_run:
            self._refuse()

    def _refuse(self) -> None:
        raise DatasetFileError(text_node_over_limit_message(offset=self.count, where=self.where))

    def close(self) -> None:
        self.stream.close()

    def __enter__(self) -> BoundedReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
