"""Which columns of a file to evaluate a model on: mapped the way import maps them.

Each role (title, text, label) is, in this order: the column the person chose; the column the
model's own dataset was imported from, when the file has it (the same layout as training needs
no options); or what detection finds (usual names, then a label column guessed from values).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from classification.models import MLModel

if TYPE_CHECKING:
    from dataset_management.mapping import ColumnMapping

PREVIEW_ROWS = 5
ROLE_OPTIONS = {"title": "title_column", "abstract": "abstract_column", "label": "label_column"}
SOURCE_WORDS = {"chosen": "chosen", "model": "as the model was trained", "detected": "detected"}


@dataclass
class EvaluationColumns:
    """What the evaluate preview shows: the file's columns, the roles they play and why."""

    filename: str
    columns: list[str]
    mapping: ColumnMapping
    sources: dict[str, str]  # role -> "chosen" | "model" | "detected"
    rows: list[dict[str, Any]] = field(default_factory=list)  # the first rows, as read
    labels_in_sample: dict[str, int] = field(default_factory=dict)
    unknown_in_sample: list[str] = field(default_factory=list)  # labels the model lacks

    def as_dict(self) -> dict[str, Any]:
        """Role -> {"column", "source"}: what a result records about the columns it used."""
        return {
            role: {"column": getattr(self.mapping, role), "source": self.sources.get(role, "")}
            for role in ROLE_OPTIONS if getattr(self.mapping, role)
        }

    def describe(self) -> str:
        """'title=TI (chosen), text=AB (as the model was trained), label=group (detected)'."""
        names = {"title": "title", "abstract": "text", "label": "label"}
        return ", ".join(
            f"{names[role]}={used['column']} ({SOURCE_WORDS.get(used['source'], '')})"
            for role, used in self.as_dict().items()
        )

    def problem(self, *, text_option: str, label_option: str) -> str:
        """Why the file cannot be scored as mapped ("" when it can), naming the options that
        fix it."""
        if self.mapping.abstract is None:
            from dataset_management.readers.errors import names_listed

            return (f"No abstract or text column found (columns: {names_listed(self.columns)}); "
                    f"name the one that holds the articles with {text_option}.")
        if self.mapping.label is None:
            return self.no_label_message(option=label_option)
        return ""

    def no_label_message(self, *, option: str) -> str:
        from dataset_management.readers.errors import names_listed

        return (
            f"The file has no label column that could be found (columns: "
            f"{names_listed(self.columns)}), so there is nothing to score the model against; "
            f"name the column that holds the labels with {option}."
        )


def mlmodel_training_mapping(*, ml_model: MLModel) -> dict[str, Any]:
    """The overrides that map a file laid out like the model's training file the same way.

    Empty when the dataset is gone. Datasets imported before their report kept the mapping
    still name their text and label columns.
    """
    dataset = ml_model.dataset
    if dataset is None:
        return {}
    saved = (dataset.report or {}).get("mapping") or {}
    if not saved:
        fields = list(dataset.text_fields or [])
        saved = {"title": fields[0] if len(fields) > 1 else None,
                 "abstract": fields[-1] if fields else None,
                 "label": dataset.label_field or None}
    out = {option: saved[role] for role, option in ROLE_OPTIONS.items() if saved.get(role)}
    separator = saved.get("label_separator")
    if out.get("label_column") and separator is not None:
        out["label_separator"] = separator or "none"
    if saved.get("label_map"):
        out["label_map"] = dict(saved["label_map"])
    return out


def evaluation_overrides(
    *, ml_model: MLModel, columns: list[str], overrides: dict[str, Any] | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """The person's choices over the training mapping's columns that this file has.

    Returns the overrides for mapping_detect and, per role, where its column came from.
    """
    from dataset_management.mapping import name_key

    chosen = {k: v for k, v in (overrides or {}).items() if v not in (None, "", False)}
    if "text_column" in chosen:  # the free-text column is the abstract's role
        chosen["abstract_column"] = chosen.pop("text_column")
    present = {name_key(c) for c in columns}
    taken = {name_key(v) for k, v in chosen.items() if k.endswith("_column")}
    trained = mlmodel_training_mapping(ml_model=ml_model)
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for role, option in ROLE_OPTIONS.items():
        if option in chosen:
            sources[role] = "chosen"
            continue
        column = trained.get(option)
        if column and name_key(column) in present and name_key(column) not in taken:
            merged[option] = column
            sources[role] = "model"
            taken.add(name_key(column))
    # The training separator belongs to the training label column; another column is detected.
    if sources.get("label") == "model" and "label_separator" in trained:
        merged["label_separator"] = trained["label_separator"]
    if trained.get("label_map"):
        merged["label_map"] = trained["label_map"]
    return merged | chosen, sources


def mlmodel_evaluation_columns(
    *,
    ml_model: MLModel,
    path: str | Path,
    filename: str | None = None,
    overrides: dict[str, Any] | None = None,
) -> EvaluationColumns:
    """Read the file's first records and decide its columns, without evaluating anything.

    DatasetFileError for a file that cannot be read or a chosen column it lacks.
    """
    from dataset_management.mapping import (
        DETECT_SAMPLE_ROWS,
        label_separator_detect,
        labels_parse,
        mapping_detect,
    )
    from dataset_management.readers import ERROR_KEY, read_records

    path = Path(path)
    name = filename or path.name
    with read_records(path, filename=name) as stream:
        sample = []
        for _, record in stream.records:
            if ERROR_KEY not in record:
                sample.append(record)
            if len(sample) >= DETECT_SAMPLE_ROWS:
                break
        merged, sources = evaluation_overrides(ml_model=ml_model, columns=stream.columns,
                                               overrides=overrides)
        mapping = mapping_detect(columns=stream.columns, overrides=merged, sample_rows=sample,
                                 file_format=stream.format, require_text=False)
    for role in ROLE_OPTIONS:
        if getattr(mapping, role) and role not in sources:
            sources[role] = "detected"
    result = EvaluationColumns(filename=name, columns=list(stream.columns), mapping=mapping,
                               sources=sources)
    separator = mapping.label_separator
    if mapping.label and separator is None:
        separator = label_separator_detect(raw_values=[r.get(mapping.label) for r in sample])
    counts: Counter[str] = Counter()
    for record in sample:
        labels = labels_parse(raw=record.get(mapping.label) or "", separator=separator or "",
                              label_map=mapping.label_map) if mapping.label else ()
        counts.update(labels)
        if len(result.rows) < PREVIEW_ROWS:
            result.rows.append({
                "title": _cell(record.get(mapping.title)) if mapping.title else "",
                "abstract": _cell(record.get(mapping.abstract)),
                "labels": list(labels),
            })
    result.labels_in_sample = dict(counts.most_common())
    result.unknown_in_sample = sorted(set(counts) - set(ml_model.label_names or []))
    return result


def _cell(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value).strip()
    return "" if value is None else str(value).strip()
