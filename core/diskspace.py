"""A full disk while saving an upload is a clear answer (507, a form error), never a 500.

The services that store a file wrap their writes in ``disk_full_refused()`` and remove what they
wrote before the ``DiskFull`` leaves them; the pages and the API answer with its message
(core.middleware.QueueUnavailableMiddleware, api.exceptions, the dataset views).
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager

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
