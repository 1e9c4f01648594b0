"""When two texts are "the same article": equal after Unicode, case, spacing and punctuation are
set aside. Such rows are one group: they share a split, and their labels are compared."""

from __future__ import annotations

import re
import unicodedata

_NOT_WORD = re.compile(r"[\W_]+")


def text_key(text: str) -> str:
    """NFKC, casefolded, punctuation and runs of whitespace as one space, trimmed."""
    return " ".join(_NOT_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold()).split())
