"""The errors screening's writes raise: ValueErrors whose message is for the person."""

from __future__ import annotations

from typing import Any


class ScreeningError(ValueError):
    """The session cannot do that; the message is for the person."""


class ScreeningConflict(ScreeningError):
    """Refused because of the record's state (answered 409): a move its path does not allow, or
    a resolution that would silently replace another. `facts` says what stands in the way."""

    def __init__(self, message: str, *, facts: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.facts = facts or {}
