"""New articles into the collection: a new dataset version, never a rewrite.

A dataset's rows are written once (models trained or batches run on it stay comparable), so, as
conflict resolution does (dataset_management/conflicts.py), a run writes the collection's rows
followed by the new articles into one JSON Lines file and imports it through the ordinary
import: validated, split and saved atomically, or not at all. The new dataset's report says
which search and run made it and from which version. The collection is unlabelled (the form
and the service refuse a labelled one: the import drops unlabelled rows from a labelled file).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.core.files import File

from classification.engine.metadata import metadata_extract
from dataset_management.models import Dataset
from dataset_management.selectors import dataset_rows_iter
from literature.models import SavedSearch, SearchRun

# Every line has every key, so the JSON reader finds the same columns in each.
KEYS = ("pmid", "doi", "pmcid", "id", "accession", "title", "abstract", "authors", "year",
        "journal", "keywords", "mesh", "publication_types")


def collection_version_create(*, search: SavedSearch, run: SearchRun,
                              articles: Iterable[dict[str, Any]], owner: Any) -> Dataset:
    """The collection's rows (none for a first run) and `articles` as a new dataset of the
    search's project. DatasetFileError (nothing kept) when the import refuses them."""
    from dataset_management.services import dataset_create_from_upload

    base = search.collection
    with tempfile.TemporaryDirectory(prefix="medlitbot-search-") as scratch:
        path = Path(scratch) / f"pubmed-search-{search.pk}-run-{run.pk}.jsonl"
        with path.open("w", encoding="utf-8") as out:
            if base is not None and base.rows_path:
                # With each row's source record: its MeSH, keywords and publication types live
                # there, and the new version must keep them.
                for row in dataset_rows_iter(dataset=base, with_record=True):
                    out.write(_line(_row_record(row)))
            for article in articles:
                out.write(_line(_article_record(article)))
        with path.open("rb") as handle:
            dataset = dataset_create_from_upload(
                owner=owner, project=search.project_id,
                uploaded_file=File(handle, name=path.name),
                name=(base.name if base is not None else search.name)[:200],
                description=f"PubMed search “{search.name}”: {search.query}"[:2000],
                mapping={"unlabelled": True}, verb="dataset_imported",
            )
    dataset.report = {**(dataset.report or {}), "saved_search": {
        "search_id": search.pk, "run_id": run.pk, "query": search.query,
        "source_dataset_id": getattr(base, "pk", None),
        "source_dataset_name": getattr(base, "name", None)}}
    dataset.save(update_fields=["report"])
    return dataset


def _line(record: dict[str, Any]) -> str:
    return json.dumps({key: record.get(key) or "" for key in KEYS}, ensure_ascii=False) + "\n"


def _joined(value: Any) -> str:
    return "; ".join(str(v) for v in value if v) if isinstance(value, list) else str(value or "")


def _article_record(article: dict[str, Any]) -> dict[str, Any]:
    """One parsed PubMed article (dataset_management.readers.pubmed_xml) as a line."""
    return {key: _joined(article.get(key)) for key in KEYS}


def _row_record(row: dict[str, Any]) -> dict[str, Any]:
    """One stored row (identifiers, citation and source record decoded) as a line.

    Its MeSH, keywords and publication types are read from the record wherever its reader kept
    them (this project's JSON Lines, PubMed XML, MEDLINE tags): without them, every version
    after the first would keep that metadata for its newest articles only.
    """
    identifiers = row.get("identifiers") or {}
    citation = row.get("citation") or {}
    title, abstract = row.get("title") or "", row.get("abstract") or ""
    if not (title or abstract):
        abstract = row.get("text") or ""
    found = metadata_extract(citation=citation, record=row.get("record"))
    return {**identifiers, "title": title, "abstract": abstract,
            "authors": _joined(citation.get("authors") or []),
            "year": str(citation.get("year") or ""),
            "journal": citation.get("journal") or _joined(found.get("journal", [])),
            **{key: _joined(found.get(key, [])) for key in
               ("mesh", "keywords", "publication_types")}}
