"""Which source column plays which role: detected from usual names, overridable by the user."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .readers.errors import DatasetFileError

TITLE_NAMES = ("title", "ti", "article_title")
ABSTRACT_NAMES = ("abstract", "ab", "text", "medical_abstract", "abstract_text")
LABEL_NAMES = (
    "labels", "label", "group", "category", "class", "condition_label", "domain", "mesh",
)
SPLIT_NAMES = ("split",)
LABEL_SEPARATORS = ("|", ";", ",")
# Keys a caller (form, CLI) may pass; anything else is a programming error, not user input.
OVERRIDE_KEYS = {
    "title_column", "abstract_column", "text_column", "label_column", "split_column",
    "label_separator", "label_map", "unlabelled",
}


@dataclass
class ColumnMapping:
    title: str | None = None
    abstract: str | None = None  # the abstract, or a single free-text column
    label: str | None = None
    split: str | None = None
    # None: detect from the values; "" : single-label, never split.
    label_separator: str | None = None
    label_map: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def text_fields(self) -> list[str]:
        return [c for c in (self.title, self.abstract) if c]


def mapping_detect(*, columns: list[str], overrides: dict[str, Any] | None = None) -> ColumnMapping:
    overrides = {k: v for k, v in (overrides or {}).items() if v not in (None, "")}
    unknown = set(overrides) - OVERRIDE_KEYS
    if unknown:
        raise ValueError(f"Unknown mapping option(s): {', '.join(sorted(unknown))}")
    if "abstract_column" in overrides and "text_column" in overrides:
        raise DatasetFileError("Give an abstract column or a text column, not both.")
    by_key = {c.strip().casefold(): c for c in columns}

    def pick(option: str, names: tuple[str, ...]) -> str | None:
        if option in overrides:
            wanted = str(overrides[option]).strip().casefold()
            if wanted not in by_key:
                raise DatasetFileError(
                    f"Column '{overrides[option]}' not found; the columns are: "
                    f"{', '.join(columns)}."
                )
            return by_key[wanted]
        return next((by_key[n] for n in names if n in by_key), None)

    mapping = ColumnMapping(
        title=pick("title_column", TITLE_NAMES),
        abstract=pick("text_column" if "text_column" in overrides else "abstract_column",
                      ABSTRACT_NAMES),
        label=None if overrides.get("unlabelled") else pick("label_column", LABEL_NAMES),
        split=pick("split_column", SPLIT_NAMES),
        label_map={str(k).strip(): str(v) for k, v in (overrides.get("label_map") or {}).items()},
    )
    if "label_separator" in overrides:
        sep = str(overrides["label_separator"])
        mapping.label_separator = "" if sep.lower() in ("none", "single") else sep
    if mapping.abstract is None:
        raise DatasetFileError(
            "No abstract or text column found (columns: "
            f"{', '.join(columns)}); name one with the abstract or text column option."
        )
    if len({c for c in (mapping.title, mapping.abstract, mapping.label, mapping.split) if c}) < len(
        [c for c in (mapping.title, mapping.abstract, mapping.label, mapping.split) if c]
    ):
        raise DatasetFileError("One column cannot play two roles (title, text, label, split).")
    return mapping


def label_separator_detect(*, raw_values: list[Any]) -> str:
    """The separator used in the most label cells ("" when every cell holds one label).

    Checked in the order |, ;, , so a file joining with "|" whose label names contain commas
    ("heart failure, chronic") is still read right.
    """
    texts = [v for v in raw_values if isinstance(v, str)]
    counts = {sep: sum(1 for v in texts if sep in v) for sep in LABEL_SEPARATORS}
    best = max(LABEL_SEPARATORS, key=lambda s: (counts[s], -LABEL_SEPARATORS.index(s)))
    return best if counts[best] else ""


def label_normalise(name: str) -> str:
    return " ".join(name.split()).lower()


def labels_parse(*, raw: Any, separator: str, label_map: dict[str, str]) -> tuple[str, ...]:
    """One cell's labels, normalised, de-duplicated, in first-seen order."""
    parts = raw if isinstance(raw, list) else (raw.split(separator) if separator else [raw])
    out: dict[str, None] = {}
    for part in parts:
        token = str(part).strip()
        if not token:
            continue
        token = label_map.get(token, token)
        out[label_normalise(token)] = None
    return tuple(out)
