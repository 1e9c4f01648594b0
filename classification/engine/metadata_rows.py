"""Rows that keep their metadata beside the text, for the models that choose their own form of it.

A single model's job composes its splits in the one form its kind reads (jobs/training_metadata.py).
A search cannot: each trial's kind reads the metadata in its own style (field tokens for TF-IDF,
a short prefix for encoders), so the job hands it `RowsWithMetadata` (the plain article texts,
each row's fields as engine/metadata.metadata_extract reads them, and the fields the job
resolved) and every trial composes train and validation itself. An ensemble gets the same rows
and reads what its members read. `subset` slices the metadata with the texts, so a
cross-validation fold (search_scoring.folds) reads its own rows' metadata. No Django.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from . import metadata
from .search_scoring import pooled as _pooled_texts
from .types import TextData


@dataclass
class RowsWithMetadata(TextData):
    """TextData whose texts are plain, with each row's metadata fields aligned to them."""

    metadata: list[dict[str, list[str]]] = field(default_factory=list)
    fields: list[str] = field(default_factory=list)  # the ones a model may read

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.metadata) != len(self.texts):
            raise ValueError(f"{len(self.texts)} texts but {len(self.metadata)} metadata rows")

    def subset(self, indices: list[int]) -> RowsWithMetadata:
        return RowsWithMetadata([self.texts[i] for i in indices],
                                [list(self.labels[i]) for i in indices],
                                [self.metadata[i] for i in indices], list(self.fields))


def pooled(train: TextData, val: TextData) -> TextData:
    """search_scoring.pooled, keeping the metadata when both splits have it (in the same order:
    train's rows, then validation's), so folds slice texts and metadata identically."""
    rows = _pooled_texts(train, val)
    if isinstance(train, RowsWithMetadata) and isinstance(val, RowsWithMetadata):
        return RowsWithMetadata(rows.texts, rows.labels, [*train.metadata, *val.metadata],
                                list(train.fields))
    return rows


def composed(data: TextData, *, fields: Sequence[str], style: str) -> TextData:
    """The rows as a model reading `fields` in `style` reads them (plain TextData); rows without
    metadata, as they are."""
    if not isinstance(data, RowsWithMetadata):
        return data
    texts = metadata.texts_with_metadata(data.texts, data.metadata, fields=list(fields),
                                         style=style) if fields else list(data.texts)
    return TextData(texts, [list(row) for row in data.labels])


def kind_reading(kind: str, data: TextData) -> dict[str, Any]:
    """The settings a trial of `kind` records (its saved manifest keeps them, and prediction
    composes the same way): the job's fields in the kind's own style, or text only."""
    fields = list(data.fields) if isinstance(data, RowsWithMetadata) else []
    return {"metadata_used": fields, "metadata_style": metadata.metadata_style(kind) if fields
            else ""}


def read_as(kind: str, *splits: TextData) -> tuple[TextData, ...]:
    """Each split as a model of `kind` reads it."""
    reading = kind_reading(kind, splits[0])
    return tuple(composed(data, fields=reading["metadata_used"],
                          style=reading["metadata_style"]) for data in splits)


def model_reads(model: Any) -> tuple[list[str], str]:
    """(fields, style) a fitted or loaded model reads, from its config ([] and "": text)."""
    config = getattr(model, "config", None)
    fields = list(getattr(config, "metadata_used", None) or [])
    return fields, (getattr(config, "metadata_style", "") or "") if fields else ""


def reading_line(model: Any, who: str) -> str:
    """The job's log line: which fields `who` (the winner, the ensemble) reads."""
    fields, style = model_reads(model)
    if not fields:
        return f"metadata: text only ({who} reads no metadata)"
    return f"metadata: {', '.join(metadata.SHOWN[f] for f in fields)} as {style} ({who})"


def ensemble_reading(members: Sequence[Any]) -> tuple[list[str], str, str]:
    """(fields, style, why) an ensemble reads: one text per row reaches every member, so it can
    carry metadata only in one form. When every member reading metadata reads the same fields
    in the same style, the ensemble reads them; a TF-IDF member reading text only may join field
    tokens (they are words it never learned, so it reads exactly its text), an encoder reading
    text only may not (a prefix would be new to it). Otherwise text only, saying why."""
    from .registry import get_spec

    reads = [model_reads(m) for m in members]
    forms = {(tuple(f), s) for f, s in reads if f}
    if not forms:
        return [], "", "text only: no member reads metadata"
    if len(forms) > 1:
        return [], "", ("text only: the members read metadata in different forms ("
                        + "; ".join(f"{m.model_type}: {', '.join(f) or 'none'} {s}".strip()
                                    for m, (f, s) in zip(members, reads, strict=True)) + ")")
    fields, style = forms.pop()
    blind = [m.model_type for m, (f, _) in zip(members, reads, strict=True) if not f and (
        style != metadata.TOKENS or get_spec(m.model_type).kind != "baseline")]
    if blind:
        return [], "", (f"text only: {', '.join(blind)} read text only, and the "
                        f"{style} of the others would be new to it")
    shown = ", ".join(metadata.SHOWN[f] for f in fields)
    return list(fields), style, f"{shown} as {style}, as its members read them"


class EvaluatesWithMetadata:
    """evaluate() on RowsWithMetadata composes them as the model reads them: a search's winner
    (`winner`) or the model itself (an ensemble). Put before BaseClassifier in the bases."""

    def evaluate(self, data: TextData) -> dict[str, Any]:
        fields, style = model_reads(getattr(self, "winner", None) or self)
        return super().evaluate(composed(data, fields=fields, style=style))  # type: ignore[misc]
