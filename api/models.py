"""API tokens: named, expiring, revocable, and stored only as a SHA-256 of the key.

The key itself is shown once, when it is made (api/tokens.py); the database keeps its first
eight characters, so a person can tell their tokens apart, and the hash it is found by.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class ApiToken(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    key_prefix = models.CharField(max_length=8)
    # A random 160-bit key needs no salt or slow hash: nothing can be guessed from its SHA-256,
    # and a plain digest can be looked up by index on every request.
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["user", "-created_at"], name="apitoken_by_user")]

    def __str__(self) -> str:
        return f"{self.name} ({self.key_prefix}…)"

    @property
    def state(self) -> str:
        """"revoked", "expired" or "active": what a request sent with it would meet."""
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at <= timezone.now():
            return "expired"
        return "active"


class UserSession(models.Model):
    """One signed-in browser session of a user, so they can see and end their sessions
    (api/token_sessions.py): Django's session table cannot be searched by user.

    The row names the session by its key; the session itself stays in SESSION_ENGINE's store,
    and a row whose session is gone (logged out, expired, ended) is listed no more."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="browser_sessions"
    )
    session_key = models.CharField(max_length=40, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    address = models.CharField(max_length=45, blank=True)
    user_agent = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["user", "-created_at"], name="usersession_by_user")]

    def __str__(self) -> str:
        return f"session of {self.user_id} from {self.address or 'unknown'}"
