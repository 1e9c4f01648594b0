"""DRF answers its views' exceptions itself, so the API's own failures are mapped here too.

Registered as REST_FRAMEWORK["EXCEPTION_HANDLER"]. The pages get the same answers from
core.middleware; both use the exception's own message, so the two never drift apart.

A role too low for the action (projects.policy.RoleRequired) is a 403 with the policy's sentence:
DRF would otherwise answer a Django PermissionDenied with its own words. A row outside the
caller's projects stays DRF's 404, which carries nothing about the row.
"""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from core.diskspace import DiskFull
from core.queueing import QueueUnavailable
from core.uploads import UploadTooLarge
from projects.policy import RoleRequired
from projects.services import ProjectError

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
    if isinstance(exc, RoleRequired):
        set_rollback()  # as DRF does for its own refusals: nothing half-done is kept
        return Response({"detail": exc.message}, status=status.HTTP_403_FORBIDDEN)
    if isinstance(exc, ProjectError):
        set_rollback()
        return Response({"detail": exc.message}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, UploadTooLarge):
        return Response({"detail": exc.message}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
    return drf_exception_handler(exc, context)
