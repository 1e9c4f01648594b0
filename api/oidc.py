"""Single sign-on (mozilla-django-oidc, on only when OIDC_RP_CLIENT_ID is set): what it needs
from the project beyond settings."""

from __future__ import annotations


def oidc_username(email: str) -> str:
    """OIDC_USERNAME_ALGO: an account the provider's login creates is named by its e-mail,
    which is unique among the provider's people and reads as who they are (the library's
    default is an unreadable hash)."""
    return email[:150]
