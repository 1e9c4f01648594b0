"""Reads for datasets: lists, one dataset, and views onto its Parquet rows."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
from django.conf import settings
from django.db.models import QuerySet

from classification.engine.types import TextData
from core import filestore
from projects import policy

from .articles import ID_ORDER
from .import_restarts import import_restart_note
from .models import Dataset, ImportJob
from .rows import JSON_COLUMNS, row_json_load
from .splitting import SPLITS

DATASET_LIST_FIELDS = (
    "id", "name", "original_filename", "file_format", "row_count", "label_names",
    "is_multilabel", "created_at",
)


def dataset_list(*, user: Any, project: Any = None) -> QuerySet[Dataset]:
    """The datasets in the user's projects (only `project`'s, when given)."""
    # The stored report can be large (co-occurrence, per-row drops); lists never show it.
    return policy.scope(Dataset.objects.all(), user=user, project=project).defer("report")


def dataset_list_rows(*, user: Any, project: Any = None) -> QuerySet[Dataset]:
    """The dataset list page's rows: only the columns it prints."""
    return policy.scope(Dataset.objects.all(), user=user, project=project).only(
        *DATASET_LIST_FIELDS)


def dataset_get(*, user: Any, pk: Any, action: str = policy.Action.VIEW) -> Dataset:
    """Http404 for a dataset outside the user's projects (ids reveal nothing); RoleRequired
    (403) when their role there may not do `action`."""
    return policy.object_get(Dataset.objects.select_related("project"), user=user,
                             action=action, pk=pk)


def dataset_move_targets(*, user: Any, dataset: Dataset) -> QuerySet[Any]:
    """The other projects the user may move the dataset to: where their role may upload."""
    from projects.models import Project, Role

    roles = [role for role in Role.values if policy.allows(role, policy.Action.UPLOAD)]
    return (Project.objects.filter(memberships__user_id=user.pk, memberships__role__in=roles)
            .exclude(pk=dataset.project_id).order_by("name", "pk"))


def dataset_rows_file(*, dataset: Dataset) -> Path:
    """The rows' Parquet file on this node (fetched from the shared storage on first use)."""
    try:
        return filestore.file_local(name=dataset.rows_path)
    except OSError:
        return Path(settings.MEDIA_ROOT) / dataset.rows_path  # reads then fail as "missing"


def dataset_sample_rows(*, dataset: Dataset, n: int = 20) -> list[dict[str, Any]]:
    """The first rows, identifiers, citation and original records decoded (the page lists
    every field the import read for each)."""
    rows = dataset_rows_iter(dataset=dataset, batch_size=max(1, n), with_record=True)
    return list(itertools.islice(rows, max(0, n)))


def dataset_rows_iter(
    *, dataset: Dataset, batch_size: int = 2000, with_record: bool = True
) -> Iterator[dict[str, Any]]:
    """Every row in order, one batch in memory at a time, its JSON columns decoded.

    Files written before the JSON columns existed read as rows without identifiers, citation
    or record ({}, {}, None), so an old dataset exports and shows like any other.
    """
    source = pq.ParquetFile(dataset_rows_file(dataset=dataset), pre_buffer=False)
    present = set(source.schema_arrow.names)
    wanted = [c for c in JSON_COLUMNS if with_record or c != "record"]
    columns = [c for c in source.schema_arrow.names if c not in JSON_COLUMNS]
    columns += [c for c in wanted if c in present]
    for batch in source.iter_batches(batch_size=batch_size, columns=columns):
        for row in batch.to_pylist():
            for name in wanted:
                row[name] = row_json_load(name, row.get(name))
            yield row


def dataset_source_field_names(*, dataset: Dataset) -> list[str]:
    """The fields of the rows' original records that a CSV export adds as columns
    (source_fields.source_field_names), read from the record column alone."""
    from .source_fields import source_field_names

    source = pq.ParquetFile(dataset_rows_file(dataset=dataset), pre_buffer=False)
    if "record" not in source.schema_arrow.names:
        return []

    def records() -> Iterator[Any]:
        for batch in source.iter_batches(batch_size=5000, columns=["record"]):
            for value in batch.column(0).to_pylist():
                yield row_json_load("record", value)

    return source_field_names(records())


def dataset_identifier_kinds(*, dataset: Dataset) -> list[str]:
    """Which identifiers (articles.ID_ORDER) any row has, found without decoding the JSON."""
    source = pq.ParquetFile(dataset_rows_file(dataset=dataset), pre_buffer=False)
    if "identifiers" not in source.schema_arrow.names:
        return []
    found: set[str] = set()
    for batch in source.iter_batches(batch_size=50_000, columns=["identifiers"]):
        column = batch.column(0)
        for kind in ID_ORDER:
            if kind not in found and pc.any(pc.match_substring(column, f'"{kind}":')).as_py():
                found.add(kind)
    return [kind for kind in ID_ORDER if kind in found]


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


def dataset_models_using(*, dataset: Dataset, user: Any) -> QuerySet:
    """The models trained on the dataset that the user can see (names only leak otherwise)."""
    return policy.scope(dataset.ml_models.all(), user=user)


def dataset_with_content(*, project_id: int, content_hash: str) -> Dataset | None:
    """The project's dataset made from these very bytes, if any (uploads are per project)."""
    return Dataset.objects.filter(project_id=project_id, content_hash=content_hash).first()


def import_job_get(*, user: Any, pk: Any, action: str = policy.Action.VIEW) -> ImportJob:
    """Http404 for an import outside the user's projects; RoleRequired (403) when their role
    there may not do `action`."""
    return policy.object_get(ImportJob.objects.select_related("dataset"), user=user,
                             action=action, pk=pk)


def import_job_progress(*, job: ImportJob) -> dict[str, Any]:
    """What the import page polls and the API returns: where the job is, in the keys a batch's
    progress uses (status, status_display, progress in percent, is_active, reason, done)."""
    fraction = job.fraction
    return {
        "id": job.pk, "status": job.status, "status_display": job.get_status_display(),
        "is_active": job.is_active, "done": not job.is_active,
        "progress": None if fraction is None else round(100 * fraction, 1),
        "rows_read": job.rows_read, "bytes_read": job.bytes_read,
        "total_bytes": job.total_bytes, "fraction": fraction, "message": job.message,
        "reason": job.reason, "cancel_requested": job.cancel_requested,
        "filename": job.filename, "name": job.name, "dataset_id": job.dataset_id,
        "created_at": job.created_at, "started_at": job.started_at,
        "finished_at": job.finished_at,
        "restarted": import_restart_note(job=job),
    }
