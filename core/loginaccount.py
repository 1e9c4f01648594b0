"""A limit on failed logins per account, whatever the addresses they come from.

django-axes locks a username per address, and core/loginthrottle.py limits an address across
usernames; guesses at one account spread over many addresses (one each from .7 to .18) met
neither. Here every failed password login is also counted per username in the shared cache (so
every gunicorn worker and node counts together), and at LOGIN_FAILURES_PER_ACCOUNT within
LOGIN_FAILURE_WINDOW_MINUTES the account's password logins are refused, from every address, for
a cool-off that doubles each time the account is locked again within a day (from
LOGIN_ACCOUNT_COOLOFF_MINUTES up to a day). The account's owner is told by e-mail where e-mail
is set up (EMAIL_BACKEND), so a lockout they did not cause does not go unseen.

The username is counted as typed (case-folded), whether or not such an account exists, so the
answers do not tell which accounts exist. Cache errors are the caller's (loginthrottle.py fails
closed on them).
"""

from __future__ import annotations

import hashlib
import logging
import math
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.mail import send_mail

logger = logging.getLogger(__name__)

DAY_SECONDS = 24 * 3600


def _keys(username: str) -> tuple[str, str, str]:
    # Hashed: a username may hold characters or a length no cache key should.
    digest = hashlib.sha256(username.casefold().encode()).hexdigest()[:32]
    return (f"login-account-failures:{digest}", f"login-account-locked:{digest}",
            f"login-account-lockouts:{digest}")


def cool_off_seconds(lockouts: int) -> int:
    """The refusal after the account's `lockouts`-th lockout within a day: doubling, at most a
    day."""
    base = max(1.0, settings.LOGIN_ACCOUNT_COOLOFF_MINUTES * 60)
    return int(min(DAY_SECONDS, base * 2 ** max(0, lockouts - 1)))


def account_refusal_message(*, username: str) -> str:
    """'' while the account may log in, else why its password logins are refused."""
    if settings.LOGIN_FAILURES_PER_ACCOUNT <= 0 or not username:
        return ""
    until = cache.get(_keys(username)[1])
    if until is None:
        return ""
    minutes = max(1, math.ceil((float(until) - time.time()) / 60))
    limit = settings.LOGIN_FAILURES_PER_ACCOUNT
    return (f"Too many failed logins for this account: {limit} in "
            f"{settings.LOGIN_FAILURE_WINDOW_MINUTES:g} minutes, from any address. Its logins "
            f"are refused for {minutes} more minute{'s' if minutes != 1 else ''}, even with the "
            "right password; the wait doubles each time this happens again within a day. If "
            "it was not you, tell the administrator.")


def account_retry_after(*, username: str) -> int:
    until = cache.get(_keys(username)[1])
    return max(1, math.ceil(float(until or time.time()) - time.time()))


def account_count_failure(*, username: str) -> None:
    """One more failure for `username`; locks it when this one reaches the limit."""
    limit = settings.LOGIN_FAILURES_PER_ACCOUNT
    if limit <= 0 or not username:
        return
    count_key, locked_key, lockouts_key = _keys(username)
    window = max(1, int(settings.LOGIN_FAILURE_WINDOW_MINUTES * 60))
    cache.add(count_key, 0, window)
    try:
        failures = cache.incr(count_key)
    except ValueError:  # the window ended between add() and incr()
        cache.set(count_key, 1, window)
        failures = 1
    if failures != limit:  # exactly one process sees the count reach it
        return
    cache.add(lockouts_key, 0, DAY_SECONDS)
    lockouts = cache.incr(lockouts_key)
    cache.touch(lockouts_key, DAY_SECONDS)
    seconds = cool_off_seconds(lockouts)
    cache.set(locked_key, time.time() + seconds, seconds)
    cache.delete(count_key)
    logger.warning("account %r locked for %s s after %s failed logins (lockout %s today)",
                   username, seconds, limit, lockouts)
    _notify_owner(username=username, minutes=math.ceil(seconds / 60))


def _notify_owner(*, username: str, minutes: int) -> None:
    if not getattr(settings, "EMAIL_ENABLED", False):
        return
    user_model = get_user_model()
    user = user_model._default_manager.filter(
        **{f"{user_model.USERNAME_FIELD}__iexact": username}).first()
    email = getattr(user, "email", "") if user is not None else ""
    if not email:
        return
    try:
        send_mail(
            "MedLitBot: logins to your account are paused",
            f"There were {settings.LOGIN_FAILURES_PER_ACCOUNT} failed logins to your account "
            f"“{username}” within {settings.LOGIN_FAILURE_WINDOW_MINUTES:g} minutes, so its "
            f"logins are refused for {minutes} minutes. If this was not you, someone is "
            "guessing your password: tell the administrator, and choose a long one.",
            None, [email], fail_silently=False)
    except Exception:  # the lockout stands whether or not the mail went
        logger.exception("lockout notice to %s not sent", username)
