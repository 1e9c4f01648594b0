"""Metadata beside the text: journal, MeSH headings, publication types and keywords.

Pure Python (no Django, no numpy): the training child, the web and the batch workers all import
it. A dataset row keeps its `citation` and its source `record` (RIS entry, MEDLINE tags, a
CSV row's cells, PubMed XML's dict: docs/contracts.md "Rows on disk"); `metadata_extract`
reads the four fields from any of them. A model sees them in one of two forms, made by
`text_with_metadata` for training and prediction alike, so the two never drift:

- TOKENS (TF-IDF): one field-prefixed token per value appended after the text,
  "jr_the_lancet mesh_neoplasms pt_randomized_controlled_trial kw_statins". The prefix keeps a
  MeSH heading apart from the same word in the abstract; "_" rather than ":" because the
  vectorizer's token pattern (\\w\\w+) would cut "jr:the_lancet" in two.
- PREFIX (transformers, embeddings): a short sentence before the text,
  "Journal: The Lancet. MeSH: Neoplasms; Humans. Type: Randomized Controlled Trial.\\n".
  Capped, so a long MeSH list cannot push the abstract out of max_length.

A field missing at prediction is simply left out: never an error.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

JOURNAL, MESH, PUBLICATION_TYPES, KEYWORDS = "journal", "mesh", "publication_types", "keywords"
FIELDS = (JOURNAL, MESH, PUBLICATION_TYPES, KEYWORDS)
AUTO, NONE = "auto", "none"
# The metadata_fields setting's values: a mode alone, or the fields by name.
CHOICES = (AUTO, NONE, *FIELDS)
SHOWN = {JOURNAL: "journal", MESH: "MeSH", PUBLICATION_TYPES: "publication types",
         KEYWORDS: "keywords"}
TOKEN_PREFIX = {JOURNAL: "jr", MESH: "mesh", PUBLICATION_TYPES: "pt", KEYWORDS: "kw"}
PREFIX_NAME = {JOURNAL: "Journal", MESH: "MeSH", PUBLICATION_TYPES: "Type", KEYWORDS: "Keywords"}
TOKENS, PREFIX = "tokens", "prefix"
# "auto" uses a field when at least this share of the training rows has it: a field most
# rows lack teaches "has no MeSH" more than MeSH, and most new articles would lack it too.
MIN_SHARE = 0.3
# The prefix form's caps: values per field and characters per value (tokens are uncapped:
# TF-IDF has no length limit).
PREFIX_MAX_VALUES = {JOURNAL: 1, MESH: 10, PUBLICATION_TYPES: 3, KEYWORDS: 8}
PREFIX_MAX_CHARS = 80

# Where each field lives in a source record, by key as the readers keep it: PubMed XML's and
# JSON's own names, MEDLINE tags (NBIB), rispy's names for RIS tags, and CSV column names
# compared by _key (lower case, letters and digits only).
_RECORD_KEYS = {
    JOURNAL: ("journal", "jt", "ta", "journalname", "journaltitle",
              "alternatetitle3", "secondarytitle", "alternatetitle2", "alternatetitle1",
              "source", "publicationtitle"),
    MESH: ("mesh", "mh", "meshheadings", "meshterms", "meshheading", "meshterm"),
    PUBLICATION_TYPES: ("publicationtypes", "pt", "publicationtype", "studytype", "doctype",
                        "documenttype"),
    KEYWORDS: ("keywords", "kw", "ot", "keyword", "authorkeywords"),
}
# A column a dataset's labels came from, as a field: that field is never a feature (the model
# would read its answer).
_COLUMN_FIELD = {key: name for name, keys in _RECORD_KEYS.items() for key in keys}
_SPLIT = re.compile(r"\s*[;|]\s*")
_NOT_WORD = re.compile(r"[^0-9a-z]+")


def _key(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", str(name).lower())


def _values(value: Any) -> list[str]:
    """A cell or a record's value as clean strings: a list stays a list, text is split on
    ';' or '|' (a CSV's "Humans; Neoplasms")."""
    items = value if isinstance(value, list | tuple) else [value]
    out: list[str] = []
    for item in items:
        if item is None or isinstance(item, dict | list):
            continue
        out.extend(part for part in _SPLIT.split(str(item).strip()) if part)
    return out


def _mesh_descriptor(value: str) -> str:
    """"Neoplasms/*drug therapy" (MEDLINE's MH) -> "Neoplasms": the subheading is left out."""
    return value.split("/", 1)[0].lstrip("*").strip()


def metadata_extract(*, citation: Mapping[str, Any] | None,
                     record: Mapping[str, Any] | None) -> dict[str, list[str]]:
    """The fields a row has, each a list of values (a journal is a list of one); fields it
    lacks are absent. Reads the citation's journal first, then the record's keys."""
    by_key: dict[str, Any] = {}
    for name, value in (record or {}).items():
        by_key.setdefault(_key(name), value)
    found: dict[str, list[str]] = {}
    journal = (citation or {}).get("journal")
    if journal and str(journal).strip():
        found[JOURNAL] = [str(journal).strip()]
    for name in FIELDS:
        if name in found:
            continue
        for key in _RECORD_KEYS[name]:
            values = _values(by_key.get(key))
            if values:
                found[name] = values[:1] if name == JOURNAL else values
                break
    if MESH in found:
        found[MESH] = [m for m in (_mesh_descriptor(v) for v in found[MESH]) if m]
    return {name: list(dict.fromkeys(values)) for name, values in found.items() if values}


def metadata_label_field(column: str | None) -> str | None:
    """The field a label column is, if it is one (an NBIB's mesh_headings, RIS keywords)."""
    return _COLUMN_FIELD.get(_key(column or "")) if column else None


def metadata_fields_present(rows: Sequence[Mapping[str, Any] | None], *,
                            min_share: float = MIN_SHARE) -> list[str]:
    """The fields at least `min_share` of the rows have (FIELDS' order); [] for no rows."""
    if not rows:
        return []
    counts = {name: sum(1 for row in rows if row and row.get(name)) for name in FIELDS}
    return [name for name in FIELDS if counts[name] >= min_share * len(rows) and counts[name]]


def metadata_fields_check(value: list[str]) -> list[str]:
    """The setting's own rule (schema.Setting.parse calls it): "auto" and "none" stand alone."""
    modes = [v for v in value if v in (AUTO, NONE)]
    if modes and len(value) > 1:
        raise ValueError(f"{modes[0]} stands alone: give auto, none, or fields from "
                         f"{', '.join(FIELDS)}.")
    return list(dict.fromkeys(value))


def metadata_fields_resolve(setting: Iterable[str], *, present: Sequence[str],
                            exclude: Iterable[str] = ()) -> list[str]:
    """The fields a model uses: "auto" (or nothing set) -> those present; "none" or [] -> none;
    named fields -> those of them the data has. `exclude`: never (the label's own field)."""
    chosen = list(setting)
    if chosen == [AUTO]:
        chosen = list(present)
    elif not chosen or NONE in chosen:
        chosen = []
    skip = set(exclude)
    return [name for name in FIELDS if name in chosen and name in present and name not in skip]


def metadata_style(kind: str) -> str:
    """TF-IDF kinds read field tokens; encoders (transformer, embedding) read a prefix."""
    return TOKENS if kind == "baseline" else PREFIX


def _token(prefix: str, value: str) -> str:
    plain = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode().lower()
    word = _NOT_WORD.sub("_", plain).strip("_")
    return f"{prefix}_{word}" if word else ""


def metadata_tokens(metadata: Mapping[str, Any] | None, *, fields: Sequence[str]) -> str:
    """"jr_the_lancet mesh_neoplasms pt_review kw_statins" for the fields given."""
    meta = metadata or {}
    tokens = [_token(TOKEN_PREFIX[name], value) for name in fields
              for value in _values(meta.get(name))]
    return " ".join(t for t in tokens if t)


def metadata_prefix(metadata: Mapping[str, Any] | None, *, fields: Sequence[str]) -> str:
    """"Journal: The Lancet. MeSH: Neoplasms; Humans. Type: Review.\\n"; "" with none."""
    meta = metadata or {}
    parts = []
    for name in fields:
        values = [v[:PREFIX_MAX_CHARS].rstrip(" .") for v in _values(meta.get(name))]
        values = [v for v in values if v][:PREFIX_MAX_VALUES[name]]
        if values:
            parts.append(f"{PREFIX_NAME[name]}: {'; '.join(values)}.")
    return " ".join(parts) + "\n" if parts else ""


def text_with_metadata(text: str, metadata: Mapping[str, Any] | None, *,
                       fields: Sequence[str], style: str) -> str:
    """What a model reads: `text` with the given fields of `metadata` in the model's form.

    An empty text stays empty (predict refuses it: metadata alone is not an article), and no
    fields, or none of them in `metadata`, give `text` unchanged.
    """
    if not fields or not text or not text.strip():
        return text
    if style == TOKENS:
        tokens = metadata_tokens(metadata, fields=fields)
        return f"{text}\n\n{tokens}" if tokens else text
    if style == PREFIX:
        return metadata_prefix(metadata, fields=fields) + text
    raise ValueError(f"metadata style is {TOKENS} or {PREFIX}, not {style!r}")


def texts_with_metadata(texts: Sequence[str], metadata: Sequence[Mapping[str, Any] | None] | None,
                        *, fields: Sequence[str], style: str) -> list[str]:
    """text_with_metadata over aligned lists; metadata None: the texts as they are."""
    if not fields or metadata is None:
        return list(texts)
    if len(metadata) != len(texts):
        raise ValueError(f"{len(texts)} texts but {len(metadata)} metadata entries")
    return [text_with_metadata(t, m, fields=fields, style=style)
            for t, m in zip(texts, metadata, strict=True)]


def metadata_summary(fields: Sequence[str]) -> dict[str, Any]:
    """What the model page shows and the metrics keep: the fields and their words."""
    return {"fields": list(fields),
            "shown": ", ".join(SHOWN[f] for f in fields) if fields else "text only"}
