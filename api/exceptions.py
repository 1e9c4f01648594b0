"""DRF answers its views' exceptions itself, so the API's own failures are mapped here too.

Registered as REST_FRAMEWORK["EXCEPTION_HANDLER"]. The pages get the same answers from
core.middleware; both use the exception's own message, so the two never drift apart.
"""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core.diskspace import DiskFull
from core.queueing import QueueUnavailable
from core.uploads import UploadTooLarge

# How long a client should wait before trying a broker that was just unreachable.
RETRY_AFTER_SECONDS = "30"


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, QueueUnavailable):
        return Response(
            {"detail": exc.message},
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": RETRY_AFTER_SECONDS},
        )
    if isinstance(exc, DiskFull):
        return Response({"detail": exc.message}, status=status.HTTP_507_INSUFFICIENT_STORAGE)
    if isinstance(exc, UploadTooLarge):
        return Response({"detail": exc.message}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
    return drf_exception_handler(exc, context)
