"""Which source column plays which role: detected from usual names, overridable by the user."""

from __future__ import annotations

import itertools
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from .readers.base import ERROR_KEY, RecordStream, cell_text
from .readers.errors import DatasetFileError, name_shown, names_listed

# Names are compared by name_key: case, spaces, underscores, hyphens and dots do not count,
# so "Article Title", "mesh_terms" and "MeSH Terms" all match. Earlier names win.
TITLE_NAMES = ("title", "ti", "articletitle", "papertitle")
ABSTRACT_NAMES = (
    "abstract", "ab", "text", "medicalabstract", "abstracttext", "articleabstract", "abstracts",
    "summary", "content", "body",
)
LABEL_NAMES = (
    "labels", "label", "category", "categories", "class", "classes", "classlabel", "condition",
    "conditions", "conditionlabel", "domain", "domains", "topic", "topics", "group", "groups",
    "target", "targets", "tags", "tag", "meshterms", "meshheadings", "mesh", "meshterm",
    "meshheading",
)
SPLIT_NAMES = ("split",)
# A reader's own fields that look like labels but are indexing: a PubMed export carries MeSH
# headings on every record and is usually meant for prediction, so they are labels only when
# asked for (the label column option).
# PubMed XML's publication types ("Journal Article" on nearly every row) would pass the shape
# guess too; its MeSH, keywords and publication types are labels only when named.
READER_FIELDS_NOT_LABELS = {"nbib": {"meshheadings"}, "ris": {"keywords"},
                            "pubmed_xml": {"mesh", "keywords", "publicationtypes"}}
# A reader's own fields never picked by name but still guessed from their values: reference
# managers (Zotero, EndNote, Rayyan) keep a screening team's labels in RIS KW. Free keywords
# have hundreds of distinct values and fail the guess; a few repeated classes pass it.
READER_LABEL_CANDIDATES = {"ris": {"keywords"}}
# Short, repeated values that are not classes; never guessed as labels from their shape.
NOT_LABEL_NAMES = {
    "id", "pmid", "pmcid", "doi", "url", "link", "year", "date", "pubdate", "publicationdate",
    "journal", "journaltitle", "source", "publisher", "author", "authors", "au", "affiliation",
    "language", "lang", "country", "volume", "issue", "pages", "issn", "keywords", "kw",
    "publicationtype", "type", "status", "note", "notes", "comment", "comments",
}
# The shape guess reads this many rows; services pass at most this many.
DETECT_SAMPLE_ROWS = 200
LABEL_SEPARATORS = ("|", ";", ",")
# Keys a caller (form, CLI) may pass; anything else is a programming error, not user input.
OVERRIDE_KEYS = {
    "title_column", "abstract_column", "text_column", "label_column", "split_column",
    "label_separator", "label_map", "unlabelled", "no_label_rows", "other_means_none",
}
# What a multi-label import does with a row left without labels: keep it as an example of
# "none of these" (the default), or drop it.
NO_LABEL_KEEP, NO_LABEL_DROP = "keep", "drop"

# The preview pages' column selects (datasets, evaluate) -> override keys (OVERRIDE_KEYS).
MAPPING_FIELDS = {
    "map_title": "title_column",
    "map_abstract": "abstract_column",
    "map_label": "label_column",
    "map_split": "split_column",
    "map_label_separator": "label_separator",
    "map_no_label_rows": "no_label_rows",
    "map_other_means_none": "other_means_none",
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
    # Multi-label only (dataset_management.unlabelled): NO_LABEL_KEEP or NO_LABEL_DROP, and
    # whether the label "other" means "none of these" (it is a real class in many files).
    no_label_rows: str = NO_LABEL_KEEP
    other_means_none: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def text_fields(self) -> list[str]:
        return [c for c in (self.title, self.abstract) if c]


def name_key(name: object) -> str:
    return re.sub(r"[\s_\-.]+", "", str(name).casefold())


def mapping_detect(
    *,
    columns: list[str],
    overrides: dict[str, Any] | None = None,
    sample_rows: list[dict[str, Any]] | None = None,
    file_format: str = "",
    require_text: bool = True,
) -> ColumnMapping:
    """Each role's column: the override, else a usual name, else (labels only) a guess from the
    values in `sample_rows` (the first records, if the caller has them). `require_text=False`
    returns a mapping without a text column rather than refusing it, for a page that lets the
    person pick one."""
    overrides = _overrides_checked(overrides)
    found = _Columns(columns=columns, overrides=overrides)
    mapping = ColumnMapping(
        title=found.pick("title_column", TITLE_NAMES),
        abstract=found.pick("text_column" if "text_column" in overrides else "abstract_column",
                            ABSTRACT_NAMES),
        split=found.pick("split_column", SPLIT_NAMES),
        label_map={str(k).strip(): str(v) for k, v in (overrides.get("label_map") or {}).items()},
    )
    if not overrides.get("unlabelled"):
        mapping.label = _label_column(found, mapping=mapping, sample_rows=sample_rows,
                                      file_format=file_format)
    if "label_separator" in overrides:
        sep = str(overrides["label_separator"])
        mapping.label_separator = "" if sep.lower() in ("none", "single") else sep
    mapping.no_label_rows = str(overrides.get("no_label_rows", NO_LABEL_KEEP)).strip().lower()
    mapping.other_means_none = str(overrides.get("other_means_none", "")).lower() in (
        "1", "true", "yes", "on")
    _mapping_check(mapping, columns=columns, require_text=require_text)
    return mapping


def _overrides_checked(overrides: dict[str, Any] | None) -> dict[str, Any]:
    """The options given a value; an unknown key is a caller's bug, two text roles the user's."""
    overrides = {k: v for k, v in (overrides or {}).items() if v not in (None, "")}
    unknown = set(overrides) - OVERRIDE_KEYS
    if unknown:
        raise ValueError(f"Unknown mapping option(s): {names_listed(sorted(unknown))}")
    if "abstract_column" in overrides and "text_column" in overrides:
        raise DatasetFileError("Give an abstract column or a text column, not both.")
    return overrides


class _Columns:
    """A file's columns, looked up by the name a person typed or by a usual name."""

    def __init__(self, *, columns: list[str], overrides: dict[str, Any]) -> None:
        self.columns, self.overrides = columns, overrides
        self.exact = {c.strip().casefold(): c for c in columns}
        self.by_key: dict[str, str] = {}
        for column in columns:
            self.by_key.setdefault(name_key(column), column)
        # A column the person gave one role is never detected for another.
        self.claimed = {self.by_key.get(name_key(v)) for k, v in overrides.items()
                        if k.endswith("_column")}

    def pick(self, option: str, names: tuple[str, ...],
             skip: set[str] = frozenset()) -> str | None:
        if option in self.overrides:
            wanted = str(self.overrides[option])
            found = self.exact.get(wanted.strip().casefold()) or self.by_key.get(name_key(wanted))
            if found is None:
                raise DatasetFileError(
                    f"Column '{name_shown(self.overrides[option])}' not found; the columns are: "
                    f"{names_listed(self.columns)}."
                )
            return found
        by_key = self.by_key
        return next((by_key[n] for n in names
                     if n in by_key and n not in skip and by_key[n] not in self.claimed), None)


def _label_column(found: _Columns, *, mapping: ColumnMapping,
                  sample_rows: list[dict[str, Any]] | None, file_format: str) -> str | None:
    """The label column by option or usual name, else guessed from the sample's values."""
    label = found.pick("label_column", LABEL_NAMES,
                       skip=READER_FIELDS_NOT_LABELS.get(file_format, set()))
    if label is None and sample_rows and mapping.abstract:
        label = label_column_guess(
            columns=found.columns, sample_rows=sample_rows, text_column=mapping.abstract,
            taken={mapping.title, mapping.abstract, mapping.split, *found.claimed},
            skip=READER_FIELDS_NOT_LABELS.get(file_format, set())
            - READER_LABEL_CANDIDATES.get(file_format, set()),
            allow=READER_LABEL_CANDIDATES.get(file_format, set()),
        )
    return label


def _mapping_check(mapping: ColumnMapping, *, columns: list[str], require_text: bool) -> None:
    if mapping.abstract is None and require_text:
        raise DatasetFileError(
            "No abstract or text column found (columns: "
            f"{names_listed(columns)}); name one with the abstract or text column option."
        )
    roles = [c for c in (mapping.title, mapping.abstract, mapping.label, mapping.split) if c]
    if len(set(roles)) < len(roles):
        raise DatasetFileError("One column cannot play two roles (title, text, label, split).")
    if mapping.no_label_rows not in (NO_LABEL_KEEP, NO_LABEL_DROP):
        raise DatasetFileError(f"Rows without a label are '{NO_LABEL_KEEP}' or "
                               f"'{NO_LABEL_DROP}', not '{name_shown(mapping.no_label_rows)}'.")


def mapping_detect_stream(
    *, stream: RecordStream, overrides: dict[str, Any] | None = None
) -> ColumnMapping:
    """mapping_detect with the stream's first records as the sample; reading them ahead does
    not consume them: they go back in front of `stream.records`."""
    head = list(itertools.islice(stream.records, DETECT_SAMPLE_ROWS))
    stream.records = itertools.chain(head, stream.records)
    return mapping_detect(columns=stream.columns, overrides=overrides, file_format=stream.format,
                          sample_rows=[record for _, record in head if ERROR_KEY not in record])


def label_column_guess(
    *,
    columns: list[str],
    sample_rows: list[dict[str, Any]],
    text_column: str,
    taken: set[str | None],
    skip: set[str] = frozenset(),
    allow: set[str] = frozenset(),
) -> str | None:
    """A column that looks like classes beside the articles: present in most rows, short, few
    distinct values, and not numbers (a numeric column unnamed as a label is a measurement or
    an id far more often than coded classes). The one with the fewest distinct values wins.
    `allow`: name keys checked even though NOT_LABEL_NAMES lists them (RIS keywords)."""
    rows = [r for r in sample_rows[:DETECT_SAMPLE_ROWS] if isinstance(r, dict)]
    if len(rows) < 4:  # too few to tell repeated values from chance
        return None
    text_lengths = [len(cell_text(r.get(text_column))) for r in rows]
    text_mean = sum(text_lengths) / len(rows)
    best: tuple[int, int, str] | None = None
    for position, column in enumerate(columns):
        key = name_key(column)
        if column in taken or (key in NOT_LABEL_NAMES and key not in allow) or key in skip:
            continue
        raw = [r.get(column) for r in rows]
        present = [v for v in raw if cell_text(v)]
        if len(present) < 0.8 * len(rows):
            continue
        separator = label_separator_detect(raw_values=present)
        names: set[str] = set()
        lengths: list[int] = []
        for value in present:
            for name in labels_parse(raw=value, separator=separator, label_map={}):
                names.add(name)
                lengths.append(len(name))
        if not lengths or all(_is_number(n) for n in names):
            continue
        mean = sum(lengths) / len(lengths)
        if (len(names) < 2 or len(names) > max(2, min(50, len(rows) // 2))
                or max(lengths) > 100 or mean > 40 or mean * 4 > text_mean):
            continue
        if best is None or (len(names), position) < best[:2]:
            best = (len(names), position, column)
    return best[2] if best else None


def label_missing_warning(*, columns: list[str], option: str = "") -> str:
    """What every door (preview, API, CLI) says when a file yields no label column; `option`
    is how that door names a label column ("--label-column")."""
    shown = f" (columns: {names_listed(columns)})" if columns else ""
    how = f" with {option}" if option else ""
    return (
        f"No label column found{shown}: this dataset can be used for prediction only, not to "
        f"train a model. If the file has labels, name their column{how}."
    )



def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


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
