"""Rows of an evaluated file that the model already saw: in its dataset's train or validation
split. Scores on such rows flatter the model, so evaluation counts them and says so.

A file row counts when its normalised text (dataset_management.normalize.text_key, the key an
import groups duplicates by: case, spacing and punctuation set aside) equals a train or
validation row of the model's dataset. Memory follows the evaluated file, not the dataset: the
file's keys are hashed into a Counter, and the dataset's Parquet is streamed a batch at a time.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Iterable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from classification.models import MLModel
from dataset_management.normalize import text_key

logger = logging.getLogger(__name__)

SEEN_SPLITS = ("train", "validation")
BATCH_ROWS = 20_000


def _digest(text: str) -> bytes:
    # 16 bytes per distinct file row whatever the text's length.
    return hashlib.blake2b(text_key(text or "").encode("utf-8"), digest_size=16).digest()


def evaluation_overlap(*, ml_model: MLModel, texts: Iterable[str]) -> dict[str, Any] | None:
    """{"rows": file rows in train or validation, "train": …, "validation": …, "of": file rows,
    "dataset": the dataset's name}; None when the model's dataset or its rows are gone (then
    nothing can be said, which the callers show as such rather than as "no overlap")."""
    from dataset_management.selectors import dataset_rows_file

    dataset = ml_model.dataset
    if dataset is None or not dataset.rows_path:
        return None
    wanted = Counter(_digest(text) for text in texts)
    try:
        source = pq.ParquetFile(dataset_rows_file(dataset=dataset), pre_buffer=False)
    except OSError as exc:
        logger.warning("overlap: rows of dataset %s unreadable: %s", dataset.pk, exc)
        return None
    if not {"text", "split"} <= set(source.schema_arrow.names):
        return None
    seen: dict[str, set[bytes]] = {split: set() for split in SEEN_SPLITS}
    for batch in source.iter_batches(batch_size=BATCH_ROWS, columns=["text", "split"]):
        batch = batch.filter(pc.is_in(batch.column("split"), value_set=pa.array(SEEN_SPLITS)))
        for text, split in zip(batch.column("text").to_pylist(),
                               batch.column("split").to_pylist(), strict=True):
            digest = _digest(text)
            if digest in wanted:
                seen[split].add(digest)
    # Import keeps a text's duplicates in one split; should a key be in both, train counts it.
    seen["validation"] -= seen["train"]
    counts = {split: sum(wanted[d] for d in keys) for split, keys in seen.items()}
    return {"rows": sum(counts.values()), **counts, "of": sum(wanted.values()),
            "dataset": dataset.name}


def overlap_warning(overlap: dict[str, Any] | None) -> str:
    """One sentence for the page and the command; "" when no row overlaps."""
    if not overlap or not overlap["rows"]:
        return ""
    return (f"{overlap['rows']} of {overlap['of']} rows of this file are in the model's "
            f"training data ({overlap['train']} in the train split, {overlap['validation']} in "
            f"the validation split of {overlap['dataset']}): the scores on them flatter the "
            f"model. Evaluate on rows it has not seen, such as the dataset's test split.")

