"""Refuse an oversized upload from its Content-Length, before any byte of the body is read."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

# Room for the multipart envelope and the form's other fields around the file itself.
ENVELOPE_BYTES = 1024 * 1024


class UploadSizeLimitMiddleware:
    """A 413 with a plain reason for a multipart body past MAX_UPLOAD_SIZE_MB.

    The forms check each file's size too, but only after Django has spooled the whole body to a
    temporary file; this refuses a 5 GB upload without storing it. It runs before the CSRF
    check, which is safe because it only ever refuses.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.content_type == "multipart/form-data":
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > settings.MAX_UPLOAD_SIZE + ENVELOPE_BYTES:
                return self._refuse(request, length)
        return self.get_response(request)

    def _refuse(self, request: HttpRequest, length: int) -> HttpResponse:
        reason = (
            f"This upload is {length / 2**20:.0f} MB; the limit is "
            f"{settings.MAX_UPLOAD_SIZE / 2**20:.0f} MB (MAX_UPLOAD_SIZE_MB). Nothing was stored."
        )
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": reason}, status=413)
        response = HttpResponse(
            f"<!doctype html><title>Upload too large</title><h1>Upload too large</h1>"
            f"<p>{reason}</p><p><a href=\"javascript:history.back()\">Go back</a></p>",
            status=413,
        )
        response["Connection"] = "close"  # the unread body must not be taken for a request
        return response


class QueueUnavailableMiddleware:
    """A broker outage becomes a 503 that says nothing was started, on every page and the API."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        from core.queueing import QueueUnavailable

        if not isinstance(exception, QueueUnavailable):
            return None
        if request.path.startswith("/api/"):
            response: HttpResponse = JsonResponse({"detail": exception.message}, status=503)
        else:
            response = HttpResponse(
                "<!doctype html><title>Job queue unreachable</title>"
                f"<h1>Job queue unreachable</h1><p>{exception.message}</p>"
                "<p><a href=\"javascript:history.back()\">Go back</a></p>",
                status=503,
            )
        response["Retry-After"] = "30"
        return response
