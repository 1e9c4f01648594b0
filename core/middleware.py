"""Refuse an oversized upload from its Content-Length, before any byte of the body is read, or
as soon as it grows past the limit while it streams (core.uploads)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.core.exceptions import DisallowedHost
from django.db import InterfaceError, OperationalError, connections
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.html import escape
from django.utils.http import url_has_allowed_host_and_scheme

from core import uploads

logger = logging.getLogger(__name__)
# Set on a request whose view lost its database connection: True until it is retried.
DROPPED_FLAG = "medlitbot_db_dropped"


def _connection_dropped(exc: BaseException) -> bool:
    """The error is the connection's loss, not the query's: PostgreSQL's "connection exception"
    class (08), an administrator's or a crash's shutdown (57P01, 57P02, 57P03), or a driver
    error with no SQLSTATE (the socket closed under it). A deadlock or a lock timeout on a live
    connection, and SQLite's errors (they carry no SQLSTATE attribute), are answered as before.
    """
    if not isinstance(exc, (OperationalError, InterfaceError)):
        return False
    sqlstate = getattr(exc.__cause__, "sqlstate", "absent")
    return sqlstate is None or (isinstance(sqlstate, str) and (
        sqlstate.startswith("08") or sqlstate in {"57P01", "57P02", "57P03"}))


class UploadSizeLimitMiddleware:
    """A 413 with a plain reason for a multipart body past MAX_UPLOAD_SIZE_MB, or any other body
    (JSON, a form) past MAX_BODY_MB.

    A declared Content-Length past the limit is refused before the body is read. A body without
    one (chunked) or a file larger than the declared length let through is counted while it
    streams and cut off at the limit by ``core.uploads.SizeLimitedUploadHandler``; whatever
    answer that produced further in (a 400 from CSRF or a view) becomes this 413. The forms
    check each file's size too. It runs before the CSRF check, which is safe because it only
    ever refuses.

    No ``Connection: close`` header: WSGI forbids hop-by-hop headers (wsgiref, behind
    runserver, answers 500 for one), and gunicorn closes a connection whose body was left
    unread by itself rather than drain it.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if request.content_type != "multipart/form-data":
            # JSON and forms are parsed whole in memory (DRF's parsers do not count), so a
            # body past the cap is refused before a byte of it is read.
            if length > uploads.plain_body_cap():
                return refusal(request, title="Request too large",
                               message=uploads.plain_body_reason(length), status=413)
        else:
            if length > uploads.body_cap():
                return self._refuse(
                    request,
                    f"This upload is {length / 2**20:.0f} MB; the limit is "
                    f"{uploads.limit_text()}. Nothing was stored.",
                )
            uploads.accept_chunked_body(request)
        response = self.get_response(request)
        if uploads.upload_was_cut_off(request) and response.status_code != 413:
            return self._refuse(request, uploads.cut_off_reason())
        return response

    def _refuse(self, request: HttpRequest, reason: str) -> HttpResponse:
        return refusal(request, title="Upload too large", message=reason, status=413)


def refusal(request: HttpRequest, *, title: str, message: str, status: int) -> HttpResponse:
    """A refusal raised below the views: JSON for the API, a small page with a way back else."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": message}, status=status)
    return HttpResponse(
        f"<!doctype html><title>{escape(title)}</title><h1>{escape(title)}</h1>"
        f"<p>{escape(message)}</p><p><a href=\"{escape(back_url(request))}\">Go back</a></p>",
        status=status,
    )


def back_url(request: HttpRequest) -> str:
    """The page the person came from when it is on this site, else the dashboard.

    A plain link, not javascript:history.back(): the Content-Security-Policy blocks script URLs.
    """
    back = request.META.get("HTTP_REFERER", "")
    try:
        host = request.get_host()
    except DisallowedHost:
        host = ""
    if url_has_allowed_host_and_scheme(back, allowed_hosts={host},
                                       require_https=request.is_secure()):
        return back
    return "/"


class QueueUnavailableMiddleware:
    """A broker outage becomes a 503 that says nothing was started, on every page and the API;
    a disk that fills while a file is saved (core.diskspace.DiskFull), a 507 that says so.

    A database connection dropped under a view (PostgreSQL restarted, a backend terminated, a
    proxy's idle cut) is retried once on a fresh connection before any answer is sent. Safe
    because each service's writes are one transaction, rolled back with the failed connection,
    and the writes a person repeats are idempotent (a decision is one row per reviewer and
    record). A multipart body cannot be read twice, so an upload is not retried.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.content_type == "multipart/form-data":
            return self.get_response(request)
        _ = request.body  # kept, so the second run's parser reads it again (MAX_BODY_MB caps it)
        response = self.get_response(request)
        if getattr(request, DROPPED_FLAG, None) is True:
            setattr(request, DROPPED_FLAG, False)  # once: a second drop is answered
            logger.warning("database connection dropped under %s %s; retrying once",
                           request.method, request.path)
            for conn in connections.all(initialized_only=True):
                conn.close_if_unusable_or_obsolete()
            response = self.get_response(request)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        from core.diskspace import DiskFull
        from core.queueing import QueueUnavailable

        if _connection_dropped(exception) and not hasattr(request, DROPPED_FLAG):
            setattr(request, DROPPED_FLAG, True)
            return None
        if isinstance(exception, DiskFull):  # the service has already removed what it wrote
            return refusal(request, title="Out of disk space", message=exception.message,
                           status=507)
        if not isinstance(exception, QueueUnavailable):
            return None
        response = refusal(request, title="Job queue unreachable", message=exception.message,
                           status=503)
        response["Retry-After"] = "30"
        return response
