"""The uploaded file itself: its size, a safe name to show, and a hashed copy on disk."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils.text import get_valid_filename

from .readers import DatasetFileError


def check_size(uploaded_file: Any) -> None:
    size = getattr(uploaded_file, "size", None)
    if size is not None and size > settings.MAX_UPLOAD_SIZE:
        raise DatasetFileError(too_big(size))


def too_big(size: int) -> str:
    return (f"The file is {size / 2**20:.1f} MB; the limit is "
            f"{settings.MAX_UPLOAD_SIZE / 2**20:.0f} MB.")


def safe_filename(name: str | None) -> str:
    """The user's file name without any directory part: it is shown, never used as a path."""
    base = (name or "").replace("\\", "/").rsplit("/", 1)[-1]
    try:
        return get_valid_filename(base)[:255]
    except Exception:  # SuspiciousFileOperation for "", "." and ".."
        return "upload"


def spool(uploaded_file: Any, dest: Path) -> str:
    """Copy the upload to dest, hashing as it streams; enforce the size limit on real bytes."""
    digest = hashlib.sha256()
    written = 0
    if hasattr(uploaded_file, "seek"):
        uploaded_file.seek(0)
    with dest.open("wb") as out:
        for chunk in chunks(uploaded_file):
            written += len(chunk)
            if written > settings.MAX_UPLOAD_SIZE:
                raise DatasetFileError(too_big(written))
            digest.update(chunk)
            out.write(chunk)
    return digest.hexdigest()


def chunks(uploaded_file: Any) -> Iterable[bytes]:
    if hasattr(uploaded_file, "chunks"):
        return uploaded_file.chunks(chunk_size=1 << 20)
    return iter(lambda: uploaded_file.read(1 << 20), b"")
