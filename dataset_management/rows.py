"""A dataset's rows on disk (docs/contracts.md): the Parquet schema, and its JSON columns.

`identifiers`, `citation` and `record` came later than the other columns: they are nullable,
and files written before them lack them, so every read goes through `row_json_load` and
`ROW_JSON_DEFAULTS` (dataset_management.selectors) and an old dataset reads as one whose
records carried no identifiers.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from .articles import Article

JSON_COLUMNS = ("identifiers", "citation", "record")
ROW_JSON_DEFAULTS: dict[str, Any] = {"identifiers": {}, "citation": {}, "record": None}
ROWS_SCHEMA = pa.schema([
    ("row_id", pa.int64()),
    ("title", pa.string()),
    ("abstract", pa.string()),
    ("text", pa.string()),
    ("labels", pa.list_(pa.string())),
    ("split", pa.string()),
    # JSON text: {"pmid", "doi", "pmcid", "id", "accession"}, {"authors", "year", "journal"},
    # and the record as the source held it (a RIS entry, MEDLINE's tags, a row's cells).
    *[(name, pa.string()) for name in JSON_COLUMNS],
])
STAGING_SCHEMA = pa.schema([ROWS_SCHEMA.field(name) for name in
                            ("title", "abstract", "text", *JSON_COLUMNS)])


def row_json(article: Article) -> tuple[str | None, str | None, str | None]:
    """The article's JSON columns; None (null) for what it does not have."""
    return (_dumps(article.identifiers), _dumps(article.citation), _dumps(article.record))


def row_json_load(name: str, value: str | None) -> Any:
    if not value:
        default = ROW_JSON_DEFAULTS[name]
        return dict(default) if isinstance(default, dict) else default
    return json.loads(value)


# One encoder for every row: json.dumps with options builds a new one per call, which cost
# as much as the encoding itself (three calls a row).
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)


def _dumps(value: dict[str, Any]) -> str | None:
    return _ENCODER.encode(value) if value else None
