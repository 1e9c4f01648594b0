"""What a maintainer tells PRISMA that the rows cannot: each source's name ("PubMed" for
search_results.csv), the records it identified before import (the database may report more
than were exported), whether it is a database, a register or another source, and how many of
the records never imported were removed by automation tools or for other reasons.

Kept in `ScreeningSession.source_facts[KEY]`, so it stays with the session as the batch facts
do. Before import means outside the rows: what a source identified beyond what was imported is
removed before screening, by automation tools or for other reasons as the maintainer says, the
rest for a reason not given; so the boxes still add up. Pure: no query, no write.
"""

from __future__ import annotations

import re
from typing import Any

from screening.errors import ScreeningError

KEY = "prisma"
KINDS = {"database": "Databases", "register": "Registers", "other": "Other sources"}
NAME_MAX = 100
REMOVED = ("automation", "other")  # PRISMA 2020's categories; duplicates are computed
_WHOLE = re.compile(r"\d{1,9}")


class PrismaSourcesInvalid(ScreeningError):
    """Refused edits, each field with its sentence; nothing of the request was kept."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{field}: {why}" for field, why in errors.items()))
        self.errors = errors


def prisma_edits_of(*, facts: dict[str, Any] | None) -> dict[str, Any]:
    stored = (facts or {}).get(KEY) or {}
    return {"sources": dict(stored.get("sources") or {}),
            "removed_before_import": {k: int((stored.get("removed_before_import") or {})
                                             .get(k, 0)) for k in REMOVED}}


def prisma_source_shown(source: dict[str, Any], edit: dict[str, Any]) -> dict[str, Any]:
    imported = int(source["identified"])
    identified = edit.get("identified")
    return {"name": edit.get("name") or source["name"], "file": source["name"],
            "imported": imported, "identified": imported if identified is None else identified,
            "kind": edit.get("kind") or "database"}


def prisma_sources_applied(*, facts: dict[str, Any] | None,
                           counts: dict[str, Any]) -> dict[str, Any]:
    """`counts` (screening.prisma) with the maintainer's names and counts: every source keeps
    its file name and what was imported from it; `removed_by_automation` and
    `removed_for_other_reasons` are PRISMA's two boxes of records removed before screening."""
    edits = prisma_edits_of(facts=facts)
    sources = [prisma_source_shown(s, edits["sources"].get(s["name"]) or {})
               for s in counts["sources"]]
    beyond = sum(s["identified"] - s["imported"] for s in sources)
    removed = edits["removed_before_import"]
    before = {"identified_beyond_imported": beyond, **removed,
              "reason_not_given": max(0, beyond - sum(removed.values()))}
    marked = counts.get("not_screened_marked_no")
    return {**counts, "sources": sources, "identified": counts["identified"] + beyond,
            "before_import": before,
            "removed_by_automation": None if marked is None else marked + removed["automation"],
            "removed_for_other_reasons": (int(counts.get("removed_other") or 0)
                                          + int(counts.get("removed_without_text") or 0)
                                          + removed["other"] + before["reason_not_given"])}


def _whole(value: Any, field: str, errors: dict[str, str]) -> int | None:
    """A count as a person may type it: a whole number, 0 or more; None for empty."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = str(value).strip()
    if isinstance(value, (bool, float)) or not _WHOLE.fullmatch(text):
        errors[field] = f"must be a whole number, 0 or more (got {str(value)[:40]!r})"
        return None
    return int(text)


def _source_edit(entry: Any, at: str, known: dict[str, dict[str, Any]],
                 edits: dict[str, Any], errors: dict[str, str]) -> None:
    if not isinstance(entry, dict) or str(entry.get("file", "")) not in known:
        files = ", ".join(sorted(known))
        errors[f"{at}.file"] = f"names no source file of this session (its files: {files})"
        return
    file = str(entry["file"])
    edit = dict(edits.get(file) or {})
    unknown = set(entry) - {"file", "name", "identified", "kind"}
    if unknown:
        errors[at] = f"unknown fields {', '.join(sorted(map(str, unknown)))}"
    if "name" in entry:
        name = " ".join(str(entry["name"] or "").split())
        if len(name) > NAME_MAX:
            errors[f"{at}.name"] = f"is {len(name)} characters; at most {NAME_MAX}"
        edit["name"] = "" if name == file else name
    if "identified" in entry:
        edit["identified"] = _whole(entry["identified"], f"{at}.identified", errors)
        imported = known[file]["identified"]
        if edit["identified"] is not None and edit["identified"] < imported:
            errors[f"{at}.identified"] = (
                f"{edit['identified']} identified before import is fewer than the {imported} "
                f"records imported from {file}")
    if "kind" in entry:
        kind = entry["kind"] if isinstance(entry["kind"], str) else ""
        if kind not in KINDS:
            errors[f"{at}.kind"] = f"must be one of {', '.join(KINDS)}"
        edit["kind"] = "" if kind == "database" else kind
    edits[file] = {k: v for k, v in edit.items() if v not in ("", None)}


def _removed_edit(given: Any, removed: dict[str, int], errors: dict[str, str]) -> None:
    if not isinstance(given, dict) or set(given) - set(REMOVED):
        errors["removed_before_import"] = f"must be an object with {' and/or '.join(REMOVED)}"
        return
    for key in REMOVED:
        if key in given:
            removed[key] = _whole(given[key], f"removed_before_import.{key}", errors) or 0


def prisma_edits_validated(*, data: Any, stored: dict[str, Any],
                           sources: list[dict[str, Any]]) -> dict[str, Any]:
    """The edits `data` asks for laid over `stored` (only the fields it names change), checked
    against the session's own `sources` (file name and records imported from it);
    PrismaSourcesInvalid naming every bad field otherwise."""
    errors: dict[str, str] = {}
    if not isinstance(data, dict) or set(data) - {"sources", "removed_before_import"}:
        raise PrismaSourcesInvalid({"body": "must be an object with sources and/or "
                                            "removed_before_import"})
    known = {s["file"]: {"identified": s["imported"]} for s in sources}
    edits = {f: e for f, e in stored["sources"].items() if f in known}
    removed = dict(stored["removed_before_import"])
    entries = data.get("sources", [])
    if not isinstance(entries, list):
        errors["sources"] = "must be a list of {file, name, identified, kind}"
        entries = []
    for i, entry in enumerate(entries):
        _source_edit(entry, f"sources[{i}]", known, edits, errors)
    if "removed_before_import" in data:
        _removed_edit(data["removed_before_import"], removed, errors)
    beyond = sum(int(e.get("identified", known[f]["identified"])) - known[f]["identified"]
                 for f, e in edits.items() if "identified" in e)
    if not errors and sum(removed.values()) > beyond:
        errors["removed_before_import"] = (
            f"{sum(removed.values())} records removed before import exceed the {beyond} the "
            "sources identified beyond those imported: give each source's count identified "
            "before import first")
    if errors:
        raise PrismaSourcesInvalid(errors)
    return {"sources": {f: e for f, e in edits.items() if e}, "removed_before_import": removed}
