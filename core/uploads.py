"""Uploads are counted while they arrive and cut off at MAX_UPLOAD_SIZE, whatever the headers say.

UploadSizeLimitMiddleware refuses a body whose Content-Length is already too large. A chunked
body has no Content-Length, and a declared length only bounds the whole body, not the file in
it, so ``SizeLimitedUploadHandler`` (first in FILE_UPLOAD_HANDLERS) counts the file bytes as
Django's multipart parser streams them. Past the limit it stops the parse, the partial temporary
files are closed (which deletes them), and ``UploadTooLarge`` reaches whoever read
``request.POST``/``FILES``; the middleware then answers 413 with the same reason.

A file part larger than FILE_UPLOAD_MAX_MEMORY_SIZE is spooled to FILE_UPLOAD_TEMP_DIR, a folder
of its own (``SpoolUploadHandler``). The parser deletes its file when the request ends or fails,
but a web worker killed mid-upload deletes nothing; ``upload_spool_purge_stale`` removes any
file there that nobody has written to for SPOOL_STALE_SECONDS. The web runs it as a spooled
upload starts (the web may be on a machine of its own), and beat's maintenance run does too.
"""

from __future__ import annotations

import contextlib
import logging
import time
from io import RawIOBase
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import BadRequest
from django.core.files.uploadhandler import (
    FileUploadHandler,
    StopUpload,
    TemporaryFileUploadHandler,
)
from django.http import HttpRequest

logger = logging.getLogger(__name__)

# Room for the multipart envelope and the form's other fields around the file itself.
ENVELOPE_BYTES = 1024 * 1024
# Set on the request once an upload has been cut off, so the middleware can answer 413 even
# when the exception was turned into a response further in (CSRF, DRF, a view's own handler).
CUT_OFF_FLAG = "medlitbot_upload_cut_off"
# An upload in progress writes its file with every chunk, and a view reads a finished one in
# seconds (it copies it into the import's or the batch's own folder); a file untouched this
# long belongs to a request that no longer exists.
SPOOL_STALE_SECONDS = 30 * 60
# The web purges at most this often per process, so an upload costs no folder scan each time.
SPOOL_PURGE_EVERY_SECONDS = 60.0
_last_purge = [0.0]


def limit_text() -> str:
    return f"{settings.MAX_UPLOAD_SIZE / 2**20:.0f} MB (MAX_UPLOAD_SIZE_MB)"


def cut_off_reason() -> str:
    return f"This upload is larger than the limit of {limit_text()}. Nothing was stored."


class UploadTooLarge(StopUpload, BadRequest):
    """The body grew past the limit while it was read.

    A StopUpload (connection_reset: Django must not read the rest of a 1 GB body just to throw
    it away; gunicorn closes the connection after the 413 instead), so that raised inside
    Django's multipart parser it makes the parser close, and so delete, its partial temporary
    files. A BadRequest, so that wherever it surfaces past the parser Django answers 400
    without logging a traceback; UploadSizeLimitMiddleware turns that answer into the 413.
    """

    def __init__(self) -> None:
        StopUpload.__init__(self, connection_reset=True)
        self.message = cut_off_reason()

    def __str__(self) -> str:
        return self.message


def upload_was_cut_off(request: HttpRequest) -> bool:
    return bool(getattr(request, CUT_OFF_FLAG, False))


def _mark_cut_off(request: HttpRequest | None) -> None:
    if request is not None:
        setattr(request, CUT_OFF_FLAG, True)


class SizeLimitedUploadHandler(FileUploadHandler):
    """Counts every file byte of a request and stops the parse past MAX_UPLOAD_SIZE.

    It stores nothing: the chunks go on to the memory or temporary-file handler after it.
    """

    def __init__(self, request: HttpRequest | None = None) -> None:
        super().__init__(request)
        self.received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.received += len(raw_data)
        if self.received > settings.MAX_UPLOAD_SIZE:
            _mark_cut_off(self.request)
            raise UploadTooLarge()
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None  # the next handler builds the UploadedFile

    def upload_complete(self) -> None:
        # The parser swallows the StopUpload it was stopped with, after it closed (and so
        # deleted) the partial temporary files; raise again so the upload cannot pass for a
        # smaller one that simply lacks its file.
        if upload_was_cut_off(self.request):
            raise UploadTooLarge()


class CappedInput(RawIOBase):
    """A chunked request body, readable up to ``cap`` bytes; one byte more stops the upload.

    Django reads a WSGI body only up to CONTENT_LENGTH, so a chunked body (no Content-Length)
    would look empty. Servers that de-chunk the body for us say so with
    ``wsgi.input_terminated`` (gunicorn does), and then it is safe to read until it ends.
    Past the cap it raises UploadTooLarge: inside the parse that stops the upload as the
    handler does; in the parser's final read past the last part it surfaces as a 400, which
    the middleware makes the 413.
    """

    def __init__(self, stream: Any, *, cap: int, request: HttpRequest) -> None:
        super().__init__()
        self._stream = stream
        self._cap = cap
        self._request = request
        self._pos = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1, /) -> bytes:
        left = self._cap - self._pos
        if left <= 0:
            if self._stream.read(1):
                _mark_cut_off(self._request)
                raise UploadTooLarge()
            return b""
        data = self._stream.read(left if size is None or size < 0 else min(size, left))
        self._pos += len(data)
        return data

    def readline(self, size: int = -1, /) -> bytes:
        left = self._cap - self._pos
        if left <= 0:
            return self.read(size)
        line = self._stream.readline(left if size is None or size < 0 else min(size, left))
        self._pos += len(line)
        return line


def body_cap() -> int:
    return settings.MAX_UPLOAD_SIZE + ENVELOPE_BYTES


def plain_body_cap() -> int:
    """The largest body that is not multipart (JSON, a form) a route reads, in bytes."""
    return int(settings.MAX_BODY_MB * 2**20)


def plain_body_reason(length: int) -> str:
    return (f"This request's body is {length / 2**20:.1f} MB; the limit is "
            f"{settings.MAX_BODY_MB:g} MB (MAX_BODY_MB). Send fewer texts at once, or upload "
            "them as a file (a batch). Nothing was read.")


def accept_chunked_body(request: HttpRequest) -> bool:
    """Let Django parse a de-chunked multipart body, read through ``CappedInput``.

    Returns False (and changes nothing) when the server did not de-chunk it for us.
    """
    meta = request.META
    if meta.get("CONTENT_LENGTH") or not meta.get("wsgi.input_terminated"):
        return False
    if "chunked" not in meta.get("HTTP_TRANSFER_ENCODING", "").lower():
        return False
    request._stream = CappedInput(meta["wsgi.input"], cap=body_cap(), request=request)
    # The multipart parser reads nothing when the length is 0, and hands the length to the
    # upload handlers, which keep anything this large out of memory; the cap is an upper bound.
    meta["CONTENT_LENGTH"] = str(body_cap())
    return True


def upload_spool_dir() -> Path | None:
    folder = getattr(settings, "FILE_UPLOAD_TEMP_DIR", None)
    return Path(folder) if folder else None


def upload_spool_make() -> None:
    """Make FILE_UPLOAD_TEMP_DIR; one that cannot be made is left to the system check to name."""
    folder = upload_spool_dir()
    if folder is not None:
        with contextlib.suppress(OSError):
            folder.mkdir(parents=True, exist_ok=True)


def upload_spool_purge_stale(*, stale_seconds: float = SPOOL_STALE_SECONDS) -> str:
    """Remove the spooled upload files nobody has written to for `stale_seconds`: their
    request's process was killed. Idempotent; returns what it did, for the log."""
    folder = upload_spool_dir()
    if folder is None or not folder.is_dir():
        return ""
    cutoff = time.time() - stale_seconds
    removed = 0
    for entry in folder.iterdir():
        with contextlib.suppress(OSError):  # finished and deleted by its own request meanwhile
            if entry.is_file() and entry.stat().st_mtime < cutoff:
                entry.unlink()
                removed += 1
    return f"{removed} abandoned upload file(s) removed" if removed else ""


class SpoolUploadHandler(TemporaryFileUploadHandler):
    """Django's temporary-file handler, into FILE_UPLOAD_TEMP_DIR (made when first needed),
    first removing what killed uploads left there."""

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        folder = upload_spool_dir()
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            if time.monotonic() - _last_purge[0] >= SPOOL_PURGE_EVERY_SECONDS:
                _last_purge[0] = time.monotonic()
                try:
                    upload_spool_purge_stale()
                except OSError:  # the upload must not fail for its neighbours' leftovers
                    logger.exception("could not purge the upload spool %s", folder)
        super().new_file(*args, **kwargs)
