"""The one error type an import raises for a problem the user can fix, and how it names things."""

from __future__ import annotations

from collections.abc import Sequence

# A message naming what the file holds must stay a message: a header of 200,000 columns or a
# 50 kB "column name" would otherwise become a megabyte-long page or JSON body.
NAMES_SHOWN = 10
NAME_CHARS = 60


class DatasetFileError(Exception):
    """A one-line, user-facing reason why a file cannot be imported (shown verbatim)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def name_shown(name: object) -> str:
    """One user-provided name, cut to NAME_CHARS characters (an ellipsis marks the cut)."""
    text = str(name)
    return text if len(text) <= NAME_CHARS else text[: NAME_CHARS - 1] + "…"


def names_listed(names: Sequence[object]) -> str:
    """'a, b, c' for a few names; the first NAMES_SHOWN and 'and N more' past that."""
    shown = ", ".join(name_shown(n) for n in names[:NAMES_SHOWN])
    rest = len(names) - NAMES_SHOWN
    return f"{shown} and {rest:,} more" if rest > 0 else shown
