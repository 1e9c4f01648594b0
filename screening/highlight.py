"""Keyword highlighting for the screen page: a session's include and exclude terms in a text.

The text is cut into segments, [text, kind] with kind "", "include" or "exclude", and the page
builds them with text nodes and <mark> elements: nothing of the record's text is ever parsed
as HTML, so a title holding markup shows as the characters it is.
"""

from __future__ import annotations

import re

MAX_TERMS = 200


def terms_clean(terms: list[str] | str) -> list[str]:
    """A term list from a list or from text with one term per line or comma; blanks dropped,
    duplicates (ignoring case) kept once, in order."""
    if isinstance(terms, str):
        terms = re.split(r"[\n,;]", terms)
    seen: dict[str, str] = {}
    for term in terms:
        term = " ".join(str(term).split())[:100]
        if term and term.lower() not in seen:
            seen[term.lower()] = term
    return list(seen.values())[:MAX_TERMS]


def _pattern(terms: list[str]) -> re.Pattern[str] | None:
    if not terms:
        return None
    # Longest first, so "heart failure" wins over "heart"; a term matches at word boundaries
    # only where it starts or ends with a word character ("HbA1c", not "HbA1c-like" halves).
    parts = []
    for term in sorted(terms, key=len, reverse=True):
        left = r"\b" if re.match(r"\w", term) else ""
        right = r"\b" if re.search(r"\w$", term) else ""
        parts.append(left + re.escape(term) + right)
    return re.compile("|".join(parts), re.IGNORECASE)


def highlight_segments(*, text: str, include: list[str], exclude: list[str]
                       ) -> list[list[str]]:
    """[[segment, kind], ...] covering `text` in order; kind is "include", "exclude" or ""."""
    kinds = {term.lower(): "include" for term in include}
    kinds.update({term.lower(): "exclude" for term in exclude if term.lower() not in kinds})
    pattern = _pattern(list(include) + [t for t in exclude if t.lower() not in
                                        {i.lower() for i in include}])
    if pattern is None or not text:
        return [[text, ""]] if text else []
    out: list[list[str]] = []
    at = 0
    for match in pattern.finditer(text):
        if match.start() > at:
            out.append([text[at:match.start()], ""])
        out.append([match.group(0), kinds.get(match.group(0).lower(), "include")])
        at = match.end()
    if at < len(text):
        out.append([text[at:], ""])
    return out
