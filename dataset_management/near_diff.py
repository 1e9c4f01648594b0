"""Two records of a near match side by side, field by field, their differences marked word by
word (difflib on the words, compared without case or the punctuation around them), for the
page to render as <del> on the first record and <ins> on the second: plain text segments,
escaped by the template.

Each field is read only up to MAX_WORDS words, so a pair costs the same whatever its
abstracts' length; the page says when a field was cut.
"""

from __future__ import annotations

import difflib
import re
import string
from typing import Any

FIELDS = (("title", "Title"), ("authors", "Authors"), ("year", "Year"),
          ("journal", "Journal"), ("doi", "DOI"), ("pmid", "PMID"), ("abstract", "Abstract"))
MAX_WORDS = 300
_WORD = re.compile(r"\S+")


def side_fields(row: dict[str, Any]) -> dict[str, str]:
    """A row's fields as the page compares them: title, authors (joined), year, journal, DOI,
    PMID, abstract; "" for one it lacks."""
    citation = row.get("citation") or {}
    identifiers = row.get("identifiers") or {}
    authors = citation.get("authors") or []
    return {"title": row.get("title") or "",
            "authors": "; ".join(authors) if isinstance(authors, list) else str(authors),
            "year": str(citation.get("year") or ""), "journal": citation.get("journal") or "",
            "doi": identifiers.get("doi") or "", "pmid": identifiers.get("pmid") or "",
            "abstract": row.get("abstract") or ""}


def words_diff(*, first: str, second: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Each text as segments {"text", "changed"}: the first's words the second lacks are
    changed on the first, the second's words the first lacks on the second."""
    a, b = _WORD.findall(first)[:MAX_WORDS], _WORD.findall(second)[:MAX_WORDS]
    matcher = difflib.SequenceMatcher(a=[_key(w) for w in a], b=[_key(w) for w in b],
                                      autojunk=False)
    left: list[dict[str, Any]] = []
    right: list[dict[str, Any]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        changed = op != "equal"
        if i2 > i1:
            left.append({"text": " ".join(a[i1:i2]), "changed": changed})
        if j2 > j1:
            right.append({"text": " ".join(b[j1:j2]), "changed": changed})
    return left, right


def _key(word: str) -> str:
    return word.strip(string.punctuation).casefold() or word


def pair_diff(*, sides: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The fields of a pair's two rows: name, label, each side's segments, whether they
    differ and whether either was cut at MAX_WORDS. A field both rows lack is left out."""
    first, second = (side_fields(side) for side in sides)
    out = []
    for name, label in FIELDS:
        if not (first[name] or second[name]):
            continue
        left, right = words_diff(first=first[name], second=second[name])
        cut = max(len(_WORD.findall(first[name])), len(_WORD.findall(second[name])))
        out.append({"name": name, "label": label, "first": left, "second": right,
                    "differs": any(s["changed"] for s in (*left, *right)),
                    "cut": cut > MAX_WORDS})
    return out
