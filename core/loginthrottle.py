"""A limit on failed logins per client address, whatever the usernames.

django-axes locks one username from one address after AXES_FAILURE_LIMIT failures; trying one
or two passwords on each of many usernames from one address never reaches that. This counts
every failed password login from an address (the login page, the admin, /api/token/) in the
shared cache, and once LOGIN_FAILURES_PER_ADDRESS are reached within a window of
LOGIN_FAILURE_WINDOW_MINUTES, which starts at the address's first failure, refuses that
address's password logins until the window ends: a 429 that says why and for how long.

- ``ClientAddressLoginLimitBackend`` goes first in AUTHENTICATION_BACKENDS. For an address over
  the limit it marks the request and raises PermissionDenied, which stops Django's
  ``authenticate`` before any password is checked.
- ``LoginLimitMiddleware`` turns a marked request's answer into the 429 (a page, or JSON under
  /api/), as django-axes' middleware does for a locked account.
- ``count_failure`` receives ``user_login_failed`` (connected in core.apps) and counts.

The counts live in the default cache (Redis in production), so every gunicorn worker and every
node sees the same ones. Failures are also counted per account (core/loginaccount.py), so
guesses at one account spread over many addresses are stopped too.

When the cache is unreachable, password logins fail closed: a 503 that says so, rather than
logins with nothing counting the guesses (a Redis that is down, or restarted, must not open the
door). Sessions and API tokens already issued keep working.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from core.clientaddress import client_address
from core.loginaccount import account_count_failure, account_refusal_message, account_retry_after

logger = logging.getLogger(__name__)

TEMPLATE = "registration/login_limited.html"
# The attribute that marks a refused request for the middleware (its message), and the one
# that says which limit refused it, for the status and Retry-After.
MARK = "login_limited"
MARK_KIND = "login_limited_kind"
CACHE_DOWN = ("Logins are paused: the store that counts failed logins (the cache, Redis) cannot "
              "be reached, so no password is checked until it is back. Try again in a minute; "
              "if it lasts, tell the administrator.")


def cache_errors() -> tuple[type[BaseException], ...]:
    # A file cache fails with OSError; Redis with its own errors (not OSError subclasses).
    import redis

    return (OSError, redis.RedisError)


def _keys(address: str) -> tuple[str, str]:
    return f"login-failures:{address}", f"login-failures-since:{address}"


def _window_seconds() -> int:
    return max(1, int(settings.LOGIN_FAILURE_WINDOW_MINUTES * 60))


def refusal_message(*, address: str) -> str:
    """'' while `address` is under the limit, else why its logins are refused."""
    limit = settings.LOGIN_FAILURES_PER_ADDRESS
    if limit <= 0 or not address:
        return ""
    count_key, since_key = _keys(address)
    found = cache.get_many([count_key, since_key])
    if int(found.get(count_key) or 0) < limit:
        return ""
    window = _window_seconds()
    left = float(found.get(since_key) or time.time()) + window - time.time()
    minutes = max(1, math.ceil(left / 60))
    return (
        f"Too many failed logins from your address: {limit} in "
        f"{_minutes_text(window / 60)}, whatever the usernames. Logins from this address are "
        f"refused for {minutes} more minute{'s' if minutes != 1 else ''}. If many people share "
        "this address, ask the administrator."
    )


def _minutes_text(minutes: float) -> str:
    shown = f"{minutes:g}"
    return f"{shown} minute{'s' if shown != '1' else ''}"


def retry_after_seconds(*, address: str) -> int:
    """Seconds until `address`'s window ends (the Retry-After header)."""
    try:
        since = cache.get(_keys(address)[1])
    except cache_errors():
        since = None
    left = float(since or time.time()) + _window_seconds() - time.time()
    return max(1, math.ceil(left))


def count_failure(sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None,
                  **kwargs: Any) -> None:
    """user_login_failed receiver: one more failure for the request's address."""
    if request is None or getattr(request, MARK, "") or settings.LOGIN_FAILURES_PER_ADDRESS <= 0:
        return  # a refused attempt is not counted: the window must not run on forever
    address = client_address(request)
    username = str(credentials.get("username") or "")
    try:
        account_count_failure(username=username)
    except cache_errors() as exc:
        logger.warning("failed login for %r not counted, the cache is unreachable: %s",
                       username, exc)
    if not address:
        return
    count_key, since_key = _keys(address)
    window = _window_seconds()
    try:
        # add() only where the window has not started; incr() is atomic in Redis, so
        # concurrent failures in several processes are all counted.
        cache.add(since_key, time.time(), window)
        cache.add(count_key, 0, window)
        try:
            cache.incr(count_key)
        except ValueError:  # the window ended between add() and incr()
            cache.set(since_key, time.time(), window)
            cache.set(count_key, 1, window)
    except cache_errors() as exc:
        logger.warning("failed login from %s not counted, the cache is unreachable: %s",
                       address, exc)


class ClientAddressLoginLimitBackend:
    """Refuses every password login from an address past its limit; never logs anyone in."""

    def authenticate(self, request: HttpRequest | None, username: str | None = None,
                     password: str | None = None, **kwargs: Any) -> None:
        if request is None or password is None:
            return None  # single sign-on and token logins guess no password
        try:
            kind, message = "address", refusal_message(address=client_address(request))
            if not message:
                kind, message = "account", account_refusal_message(username=username or "")
        except cache_errors() as exc:
            logger.error("password login refused, the cache is unreachable: %s", exc)
            kind, message = "cache", CACHE_DOWN
        if message:
            setattr(request, MARK, message)
            setattr(request, MARK_KIND, kind)
            request.login_limited_username = username or ""
            raise PermissionDenied(message)
        return None

    # No get_user() on purpose: Django's force_login() and sessions take the first backend that
    # has one, and this one never returns a user.


def limited_response(request: HttpRequest) -> HttpResponse:
    """The 429 (the 503 while the cache is unreachable): JSON under /api/, the page elsewhere."""
    message = getattr(request, MARK)
    kind = getattr(request, MARK_KIND, "address")
    status = 503 if kind == "cache" else 429
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse({"detail": message}, status=status)
    else:
        response = render(request, TEMPLATE, {"message": message}, status=status)
    response["Retry-After"] = str(_retry_after(request, kind))
    return response


def _retry_after(request: HttpRequest, kind: str) -> int:
    if kind == "cache":
        return 60
    if kind == "account":
        try:
            return account_retry_after(username=getattr(request, "login_limited_username", ""))
        except cache_errors():
            return 60
    return retry_after_seconds(address=client_address(request))


class LoginLimitMiddleware:
    """Answers a request the backend refused with the 429, whatever the view made of it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if getattr(request, MARK, ""):
            return limited_response(request)
        return response
