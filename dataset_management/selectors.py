"""Reads for datasets: lists, one dataset, and views onto its Parquet rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
from django.conf import settings
from django.db.models import QuerySet

from classification.engine.types import TextData

from .models import Dataset
from .splitting import SPLITS

DATASET_LIST_FIELDS = (
    "id", "name", "original_filename", "file_format", "row_count", "label_names",
    "is_multilabel", "created_at",
)


def dataset_list(*, owner: Any) -> QuerySet[Dataset]:
    # The stored report can be large (co-occurrence, per-row drops); lists never show it.
    return Dataset.objects.filter(owner=owner).defer("report")


def dataset_list_rows(*, owner: Any) -> QuerySet[Dataset]:
    """The dataset list page's rows: only the columns it prints."""
    return Dataset.objects.filter(owner=owner).only(*DATASET_LIST_FIELDS)


def dataset_get(*, owner: Any, pk: int) -> Dataset:
    """Raises Dataset.DoesNotExist for another owner's dataset, so views answer 404, not 403."""
    return Dataset.objects.get(owner=owner, pk=pk)


def dataset_rows_file(*, dataset: Dataset) -> Path:
    return Path(settings.MEDIA_ROOT) / dataset.rows_path


def dataset_sample_rows(*, dataset: Dataset, n: int = 20) -> list[dict[str, Any]]:
    source = pq.ParquetFile(dataset_rows_file(dataset=dataset))
    for batch in source.iter_batches(batch_size=max(1, n)):
        return batch.to_pylist()[:n]
    return []


def dataset_split_examples(*, dataset: Dataset, split: str) -> Any:
    """One split's texts and labels, as classification's TextData."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    table = pq.read_table(
        dataset_rows_file(dataset=dataset), columns=["text", "labels"],
        filters=[("split", "=", split)],
    )
    return TextData(
        texts=table.column("text").to_pylist(),
        labels=[list(labels) for labels in table.column("labels").to_pylist()],
    )


def dataset_length_histogram(*, dataset: Dataset) -> dict[str, Any]:
    """Words per text, binned; stored at import, recomputed for datasets imported before that."""
    stored = dataset.report.get("length_histogram")
    if stored:
        return stored
    words: list[int] = []
    source = pq.ParquetFile(dataset_rows_file(dataset=dataset))
    for batch in source.iter_batches(columns=["text"], batch_size=10_000):
        words.extend(len(t.split()) for t in batch.column("text").to_pylist())
    if not words:
        return {"unit": "words", "edges": [], "counts": []}
    counts, edges = np.histogram(np.asarray(words), bins=20)
    return {"unit": "words", "edges": [round(float(e), 1) for e in edges],
            "counts": counts.tolist()}


def dataset_models_using(*, dataset: Dataset) -> QuerySet:
    return dataset.ml_models.all()
