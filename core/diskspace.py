"""A full disk while saving an upload is a clear answer (507, a form error), never a 500; and
/readyz fails before the disk is full (free_space_problem).

The services that store a file wrap their writes in ``disk_full_refused()`` and remove what they
wrote before the ``DiskFull`` leaves them; the pages and the API answer with its message
(core.middleware.QueueUnavailableMiddleware, api.exceptions, the dataset views).
"""

from __future__ import annotations

import errno
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DISK_FULL_MESSAGE = (
    "The server ran out of disk space while saving this file; nothing was kept. "
    "Try again later or ask the administrator to free space."
)
# A quota reached is a full disk for this user: the same answer, the same remedy.
DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


class DiskFull(Exception):
    """Not a ValueError on purpose: callers that turn bad input into a 400 must let it pass."""

    def __init__(self, message: str = DISK_FULL_MESSAGE) -> None:
        super().__init__(message)
        self.message = message


def is_disk_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS


@contextmanager
def disk_full_refused() -> Iterator[None]:
    """Turn ENOSPC/EDQUOT into DiskFull; any other error passes unchanged."""
    try:
        yield
    except OSError as exc:
        if is_disk_full(exc):
            raise DiskFull() from exc
        raise


# --- free space, for /readyz and the doctor ------------------------------------------------------
# The folders that fill up: uploads and parsed rows, trained models and checkpoints, and what a
# node fetched from the shared storage. Named by their setting, which is what an operator looks
# up, and never by path in /readyz's public answer.
WATCHED_FOLDERS = ("MEDIA_ROOT", "MODEL_ARTIFACT_ROOT", "FILE_CACHE_DIR")


def _existing(folder: Path) -> Path:
    # A folder not made yet (FILE_CACHE_DIR on one machine) fills the disk it will be made on.
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def free_megabytes() -> dict[str, int]:
    """Free space, in MB, on the disk of each watched folder: {"MEDIA_ROOT": 51200, ...}."""
    from django.conf import settings

    return {
        name: int(shutil.disk_usage(_existing(Path(getattr(settings, name)))).free // 2**20)
        for name in WATCHED_FOLDERS
    }


def free_space_problem(*, free_mb: dict[str, int], min_free_mb: int) -> str:
    """'' when every folder has `min_free_mb`, else which are short and by how much."""
    short = [f"{name} has {mb} MB free" for name, mb in free_mb.items() if mb < min_free_mb]
    if not short:
        return ""
    return f"{'; '.join(short)}, under READYZ_MIN_FREE_MB={min_free_mb}"
