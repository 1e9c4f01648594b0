"""Every field an import read, kept with each row as its original record ("record": a PubMed
article's MeSH headings, publication types, keywords and PMCID; a RIS entry's tags by rispy's
names; a spreadsheet's every column) and given back: as columns of the dataset's CSV export
after its own, whole in the JSON Lines export, and listed under each sample on the dataset
page. Pure functions: the rows are read by selectors."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .mapping import name_key

# What the CSV export writes as its own columns already: a record's field of the same name
# (compared as mapping.name_key compares) repeats it and is not written twice.
OWN_COLUMNS = ("row_id", "pmid", "id", "doi", "accession", "pmcid", "title", "abstract",
               "authors", "year", "journal", "labels", "split", "text")


def source_field_names(records: Iterable[Any]) -> list[str]:
    """The fields the records hold that the export's own columns do not, in the order first
    seen: the CSV export's extra columns."""
    taken = {name_key(c) for c in OWN_COLUMNS}
    found: dict[str, None] = {}
    for record in records:
        if isinstance(record, dict):
            for key in record:
                if key not in found and name_key(key) not in taken:
                    found[key] = None
    return list(found)


def source_field_cell(record: Any, name: str) -> Any:
    """One field as a CSV cell: a list joined with "; " (MeSH headings, keywords, authors), a
    mapping as JSON, nothing as ""."""
    value = record.get(name) if isinstance(record, dict) else None
    if isinstance(value, list | tuple):
        return "; ".join(str(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    return "" if value is None else value


def source_fields_shown(record: Any) -> list[tuple[str, str]]:
    """The record's fields for a page: each non-empty one, its name and its text; title and
    abstract left out (the page shows them)."""
    if not isinstance(record, dict):
        return []
    hidden = {name_key("title"), name_key("abstract")}
    shown = []
    for name in record:
        text = str(source_field_cell(record, name))
        if text and name_key(name) not in hidden:
            shown.append((name, text))
    return shown
