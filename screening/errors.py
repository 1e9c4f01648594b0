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


# A note is a reviewer's reason in a sentence or a paragraph; the cap keeps a pasted document
# out of every export line and activity entry, and is refused, never cut, so nothing is lost.
NOTE_MAX_CHARS = 5000


def note_checked(note: str) -> str:
    """The note as given, or ScreeningError naming the cap when it is longer."""
    if len(note) > NOTE_MAX_CHARS:
        raise ScreeningError(f"A note holds at most {NOTE_MAX_CHARS:,} characters; this one has "
                             f"{len(note):,}. Nothing was saved: shorten it and send it again.")
    return note
