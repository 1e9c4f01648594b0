"""What a record says about itself wherever it is shown (screen page, conflicts, full text,
exports): its title or first sentence, identifiers, citation, keywords and a source link."""

from __future__ import annotations

import re
from typing import Any

from screening.models import Record

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")
SOURCE_LINKS = (("pmid", "https://pubmed.ncbi.nlm.nih.gov/{}/"), ("doi", "https://doi.org/{}"),
                ("pmcid", "https://www.ncbi.nlm.nih.gov/pmc/articles/{}/"))


def record_title_shown(*, record: Record, limit: int = 300) -> str:
    """The title, else the text's first sentence (cut at `limit`), else the record's number: a
    collection with one text column and no title still has every record told apart."""
    if record.title.strip():
        return " ".join(record.title.split())
    text = " ".join(record.abstract.split())
    if not text:
        return f"Record {record.position + 1}"
    first = _SENTENCE_END.split(text, maxsplit=1)[0]
    return first if len(first) <= limit else first[:limit - 1].rstrip() + "…"


def record_citation(*, record: Record) -> dict[str, Any]:
    """Authors (a list), year, journal and keywords (a list): "" or [] where the source has
    none. Keywords are the source's own and its MeSH headings (screening.sources)."""
    cite = record.citation or {}
    return {"authors": [str(a) for a in cite.get("authors") or []],
            "year": str(cite.get("year", "")), "journal": str(cite.get("journal", "")),
            "keywords": [str(k) for k in cite.get("keywords") or []]}


def record_identity(*, record: Record) -> dict[str, Any]:
    """Identifiers, citation and a source link: what traces a record back to its source.

    `record_id` is MedLitBot's (the API's `record`), `row` the record's row in its collection,
    `id` the collection's first identifier; PMID and DOI are "" where the source has none.
    """
    ids = {k: str(v) for k, v in (record.identifiers or {}).items() if v}
    link = next((url.format(ids[k]) for k, url in SOURCE_LINKS if ids.get(k)), "")
    if not link and ids.get("id", "").startswith(("http://", "https://")):
        link = ids["id"]
    return {"record_id": record.pk, "row": record.position + 1, "id": record.ext_id,
            "pmid": ids.get("pmid", ""), "doi": ids.get("doi", ""),
            "identifiers": {"record_id": record.pk, **ids}, **record_citation(record=record),
            "source_url": link, "title": record_title_shown(record=record)}
