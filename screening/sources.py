"""What a session screens: the rows of an imported dataset or of a finished batch.

Both become the same plain rows (title, abstract, an identifier, every identifier and the
citation - authors, year, journal, keywords - where the row has them, the dataset's own labels
or None)
that services.session_create copies into Records once, plus the facts PRISMA's counts
need later (a batch is purged after a week; the session outlives it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from classification.batches import selectors as batch_selectors
from classification.engine import metadata
from classification.models import BatchJob
from dataset_management import selectors as dataset_selectors
from dataset_management.export import item_id
from screening.errors import ScreeningError


@dataclass
class Collection:
    source: str  # ScreeningSession.Source
    name: str
    project_id: int
    rows: list[dict[str, Any]]
    facts: dict[str, Any] = field(default_factory=dict)


# A reviewer reads the keywords beside a record that has no abstract; a MEDLINE record's few
# dozen MeSH headings are enough.
MAX_KEYWORDS = 40


def _citation(found: dict[str, Any], *, record: Any = None,
              label_field: str | None = None) -> dict[str, Any]:
    """Authors (a list), year, journal and keywords (a list: the source's keywords, then its
    MeSH headings), only those present. The field the dataset's labels were read from is
    never a keyword: it holds earlier decisions (Rayyan's and EndNote's keep them in RIS KW)."""
    out = {k: found.get(k) for k in ("authors", "year", "journal") if found.get(k)}
    if isinstance(out.get("authors"), str):
        out["authors"] = [out["authors"]]
    fields = metadata.metadata_extract(citation=None, record=record if isinstance(
        record, dict) else None)
    keywords = [k for name in (metadata.KEYWORDS, metadata.MESH) if name != label_field
                for k in fields.get(name, [])]
    if keywords:
        out["keywords"] = list(dict.fromkeys(keywords))[:MAX_KEYWORDS]
    return out


def _has_text(row: dict[str, Any]) -> bool:
    return bool((row["title"] + row["abstract"]).strip())


def collection_of_dataset(*, dataset: Any) -> Collection:
    """A dataset's stored rows; ScreeningError for one with no rows or no text at all."""
    if not dataset.rows_path:
        raise ScreeningError(f"Dataset “{dataset.name}” has no rows to screen.")
    labelled = bool(dataset.label_names)
    label_field = metadata.metadata_label_field(dataset.label_field)
    rows = []
    for row in dataset_selectors.dataset_rows_iter(dataset=dataset):
        identifiers = row.get("identifiers") or {}
        rows.append({
            "title": row.get("title") or "", "abstract": row.get("abstract") or "",
            "ext_id": str(next(iter(identifiers.values()), "") if identifiers else "")[:255],
            "identifiers": dict(identifiers),
            "citation": _citation(row.get("citation") or {}, record=row.get("record"),
                                  label_field=label_field),
            "truth": list(row.get("labels") or []) if labelled else None,
        })
    if not any(_has_text(r) for r in rows):
        raise ScreeningError(f"Dataset “{dataset.name}” has no titles or abstracts: there is "
                             "nothing to read. Import a file with a title or abstract column.")
    return Collection(source="dataset", name=dataset.name, project_id=dataset.project_id,
                      rows=rows)


def collection_of_batch(*, batch: BatchJob) -> Collection:
    """A finished batch's classified articles (its stored result rows, in order).

    Articles the batch skipped for having no text are left out and counted; its predictions
    are not decisions, so no record carries a truth. ScreeningError for a batch that has not
    completed, whose results are gone, or that holds no article with text.
    """
    label = f"Batch “{batch.filename}”"
    if batch.status != BatchJob.Status.COMPLETED:
        raise ScreeningError(f"{label} is {batch.get_status_display().lower()}: only a "
                             "completed batch can be screened.")
    items = batch_selectors.batch_job_items(batch=batch)
    if items is None:
        raise ScreeningError(f"{label} has no stored results to screen (they are removed a "
                             "week after the batch, or it predates them): classify the file "
                             "again.")
    rows, skipped = [], 0
    for item in items:
        row = {"title": item.get("title") or "", "abstract": item.get("abstract") or "",
               "ext_id": str(item_id(item))[:255], "truth": None,
               "identifiers": dict(item.get("identifiers") or {}),
               "citation": _citation(item, record=item.get("record"))}
        if _has_text(row):
            rows.append(row)
        else:
            skipped += 1
    if not rows:
        raise ScreeningError(f"{label} has no article with a title or abstract: there is "
                             "nothing to read.")
    model = getattr(batch.ml_model, "name", "")
    return Collection(
        source="batch", name=f"{batch.filename} (classified by {model})"[:255],
        project_id=batch.project_id, rows=rows,
        facts={"batch": batch.pk.hex, "identified": len(rows) + skipped,
               "without_text": skipped, "model": model})
