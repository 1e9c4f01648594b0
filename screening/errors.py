"""The one error screening's writes raise: a ValueError whose message is for the person."""

from __future__ import annotations


class ScreeningError(ValueError):
    """The session cannot do that; the message is for the person."""
