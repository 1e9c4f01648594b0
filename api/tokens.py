"""API tokens: making, listing and revoking them, and the DRF authentication that checks them.

Why DRF with a small model of our own (api.models.ApiToken) rather than django-rest-knox:
- the contract stays exactly as it was: ``POST /api/token/`` answers ``{"token": ...}`` and the
  token travels as ``Authorization: Token <token>``. Knox's login view answers ``expiry`` too,
  and its default header keyword and response shape would have to be overridden anyway;
- tokens here have names, a shown prefix, a last-used time and a revoked time kept for the
  record. Knox has no names and deletes a token to revoke it, so the list a person sees and the
  activity log could not say which token was revoked or when;
- a ~100-line module on DRF's own ``TokenAuthentication`` adds no dependency to keep current.

Each key is 20 random bytes as 40 hex digits (the shape DRF's keys had); only its SHA-256 and
its first eight characters are stored, so the database never holds a usable token. A lookup
reads the row on every request (no cache), so a revoked token is refused on the very next
request.

This module imports no DRF view: DRF resolves DEFAULT_AUTHENTICATION_CLASSES while
``rest_framework.views`` is being imported, and a view import here would be circular. The API
views are in api/token_api.py, the settings page in api/token_views.py.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.http import Http404
from django.urls import reverse
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from api.models import ApiToken

KEY_PREFIX_LENGTH = 8
NAME_MAX_LENGTH = 100
# last_used_at is written at most this often per token: a busy client does not turn every
# read into a write, and "last used" stays true to the minute.
LAST_USED_EVERY = timedelta(minutes=1)


class TokenError(ValueError):
    """A refusal in plain words (no name, too long a life)."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _when(moment: Any) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M %Z")


def _activity(*, user: Any, verb: str, summary: str, token: ApiToken, actor: Any = None) -> None:
    # Imported here: projects.services is not needed to authenticate a request.
    from projects.services import activity_record, project_personal

    activity_record(project=project_personal(user=user), actor=actor or user, verb=verb,
                    summary=summary, subject=token, name=token.name, prefix=token.key_prefix)


# --- Writes ---------------------------------------------------------------------------------------


def token_create(*, user: Any, name: str, days: int | None = None) -> tuple[ApiToken, str]:
    """A new token for the user and its key: the key is returned once and stored nowhere."""
    name = (name or "").strip()
    if not name:
        raise TokenError("A token needs a name, so you can tell it from your others.")
    if len(name) > NAME_MAX_LENGTH:
        raise TokenError(f"A token's name has at most {NAME_MAX_LENGTH} characters.")
    longest = settings.API_TOKEN_DAYS
    days = longest if days is None else days
    if not 1 <= days <= longest:
        raise TokenError(f"A token lives from 1 to {longest} days (API_TOKEN_DAYS).")
    key = secrets.token_hex(20)
    now = timezone.now()
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=user, name=name, key_prefix=key[:KEY_PREFIX_LENGTH], key_hash=key_hash(key),
            created_at=now, expires_at=now + timedelta(days=days),
        )
        _activity(user=user, verb="token_created", token=token,
                  summary=f"{user.get_username()} made the API token “{name}” "
                          f"({token.key_prefix}…), valid until {_when(token.expires_at)}")
    return token, key


def token_revoke(*, user: Any, token: ApiToken, by: Any = None) -> ApiToken:
    """Revoke one of the user's tokens; it is refused from the next request on.

    ``by`` is whoever else revoked it (staff, in the admin); the log names them.
    """
    if token.user_id != user.pk:
        raise Http404("No such token.")
    by = by or user
    whose = "the" if by.pk == user.pk else f"{user.get_username()}'s"
    with transaction.atomic():
        revoked = ApiToken.objects.filter(pk=token.pk, revoked_at=None).update(
            revoked_at=timezone.now())
        if revoked:
            _activity(user=user, actor=by, verb="token_revoked", token=token,
                      summary=f"{by.get_username()} revoked {whose} API token “{token.name}” "
                              f"({token.key_prefix}…)")
    token.refresh_from_db()
    return token


# --- Reads ----------------------------------------------------------------------------------------


def token_list(*, user: Any) -> QuerySet[ApiToken]:
    """The user's tokens that were not revoked, newest first (expired ones say so)."""
    return ApiToken.objects.filter(user_id=user.pk, revoked_at=None)


def token_get(*, user: Any, pk: Any) -> ApiToken:
    """One of the user's own tokens; anyone else's, or a revoked one, is a 404."""
    token = token_list(user=user).filter(pk=pk).first() if str(pk).isdigit() else None
    if token is None:
        raise Http404("No such token.")
    return token


# --- Authentication -------------------------------------------------------------------------------


class ApiTokenAuthentication(TokenAuthentication):
    """``Authorization: Token <key>``, checked against the hashed, expiring, revocable tokens.

    request.auth is the ApiToken. Refusals are 401s that say what happened and where to make a
    new token.
    """

    keyword = "Token"
    model = ApiToken

    def authenticate(self, request: Any) -> tuple[Any, ApiToken] | None:
        self._request = request  # DRF makes one authenticator per request
        return super().authenticate(request)

    def _renew_where(self) -> str:
        path = reverse("account_tokens")
        request = getattr(self, "_request", None)
        url = request.build_absolute_uri(path) if request is not None else path
        return f"make a new one at {url} or POST your username and password to /api/token/"

    def authenticate_credentials(self, key: str) -> tuple[Any, ApiToken]:
        token = (ApiToken.objects.select_related("user")
                 .filter(key_hash=key_hash(key)).first())
        if token is None:
            raise exceptions.AuthenticationFailed(f"Invalid token; {self._renew_where()}.")
        if token.revoked_at is not None:
            raise exceptions.AuthenticationFailed(
                f"This token (“{token.name}”) was revoked on {_when(token.revoked_at)}; "
                f"{self._renew_where()}.")
        now = timezone.now()
        if token.expires_at <= now:
            raise exceptions.AuthenticationFailed(
                f"This token (“{token.name}”) expired on {_when(token.expires_at)}; "
                f"{self._renew_where()}.")
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        if token.last_used_at is None or now - token.last_used_at >= LAST_USED_EVERY:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
            token.last_used_at = now
        return token.user, token
