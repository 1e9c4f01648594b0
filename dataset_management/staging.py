"""Hold an upload between "preview" and "confirm" so the person need not upload it twice.

Files live under MEDIA_ROOT/staging/<owner id>/<token>/, so one user's token can never open
another user's file, and a token is a random hex string that cannot walk the filesystem.
"""

from __future__ import annotations

import re
import secrets
import shutil
import time
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.files.uploadedfile import UploadedFile

from core.diskspace import disk_full_refused

TOKEN_RE = re.compile(r"^[0-9a-f]{32}$")
MAX_AGE_SECONDS = 24 * 3600


def _root(owner_id: int) -> Path:
    return Path(settings.MEDIA_ROOT) / "staging" / str(int(owner_id))


def _safe_name(name: str) -> str:
    base = Path(name or "upload").name
    return re.sub(r"[^A-Za-z0-9._-]+", "_", base)[:120] or "upload"


def upload_stage(*, owner_id: int, uploaded_file: UploadedFile) -> str:
    """Keep the upload for the confirm step; core.diskspace.DiskFull, keeping nothing, when the
    disk fills while it is written."""
    _purge_old(owner_id)
    token = secrets.token_hex(16)
    folder = _root(owner_id) / token
    try:
        with disk_full_refused():
            folder.mkdir(parents=True, exist_ok=True)
            with (folder / _safe_name(uploaded_file.name)).open("wb") as out:
                for chunk in uploaded_file.chunks():
                    out.write(chunk)
    except BaseException:
        # A half-written file would be offered to the confirm step as if it were the upload.
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return token


def upload_open(*, owner_id: int, token: str) -> File | None:
    """The staged file as a Django File named like the original, or None when gone."""
    if not TOKEN_RE.match(token or ""):
        return None
    folder = _root(owner_id) / token
    files = [p for p in folder.iterdir() if p.is_file()] if folder.is_dir() else []
    if not files:
        return None
    handle = File(files[0].open("rb"), name=files[0].name)
    return handle


def upload_discard(*, owner_id: int, token: str) -> None:
    if TOKEN_RE.match(token or ""):
        shutil.rmtree(_root(owner_id) / token, ignore_errors=True)


def _purge_old(owner_id: int) -> int:
    root = _root(owner_id)
    if not root.is_dir():
        return 0
    cutoff = time.time() - MAX_AGE_SECONDS
    removed = 0
    for folder in root.iterdir():
        if folder.is_dir() and folder.stat().st_mtime < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed


def staging_purge_abandoned() -> int:
    """Remove every owner's uploads that were previewed but never confirmed within a day."""
    root = Path(settings.MEDIA_ROOT) / "staging"
    if not root.is_dir():
        return 0
    return sum(_purge_old(int(owner.name)) for owner in root.iterdir() if owner.name.isdigit())
