"""Batch reads, always through projects.policy: a batch outside the user's projects is a 404."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.db.models import QuerySet
from django.http import Http404

from classification.batches import storage
from classification.models import BatchJob
from core import filestore
from projects import policy

S = BatchJob.Status


def batch_job_uuid(batch_id: Any) -> uuid.UUID | None:
    """The batch id as a UUID, or None for text that is none (a URL's 32 hex characters)."""
    if isinstance(batch_id, uuid.UUID):
        return batch_id
    try:
        return uuid.UUID(hex=str(batch_id))
    except ValueError:
        return None


def _batch_rows() -> QuerySet[BatchJob]:
    return BatchJob.objects.select_related("ml_model").only(
        *[f.name for f in BatchJob._meta.concrete_fields], "ml_model__id", "ml_model__name",
    )


def batch_job_list(*, user: Any, project: Any = None) -> QuerySet[BatchJob]:
    """The batches in the user's projects (only `project`'s, when given), newest first."""
    return policy.scope(_batch_rows(), user=user, project=project)


def batch_job_get(*, user: Any, batch_id: Any, action: str = policy.Action.VIEW,
                  queryset: QuerySet[BatchJob] | None = None) -> BatchJob:
    """The batch if the user may do `action` on it: Http404 outside their projects (or for an
    id that is no UUID), RoleRequired (403) when their role there may not."""
    pk = batch_job_uuid(batch_id)
    if pk is None:
        raise Http404("No such batch.")
    return policy.object_get(_batch_rows() if queryset is None else queryset, user=user,
                             action=action, pk=pk)


def batch_job_result_file(*, batch: BatchJob) -> Path | None:
    """The finished CSV, or None while there is none (or it has been purged)."""
    if batch.status != S.COMPLETED or not batch.result_path:
        return None
    try:
        # The records beside the CSV are what the RIS and JSON Lines downloads read.
        filestore.file_local(name=str(Path(batch.result_path).with_name(storage.RECORDS_NAME)))
        path = filestore.file_local(name=batch.result_path)
    except OSError:
        return None
    return path if path.is_file() else None


def batch_job_items(*, batch: BatchJob) -> Iterator[dict[str, Any]] | None:
    """A completed batch's articles as the runner stored them, in order: one export item each
    (`row`, `identifiers`, `title`, `abstract`, `predicted_labels`, `probabilities`, `note`,
    which says "skipped: ..." for an article without text). None while there is no result, or
    when the batch finished before its records were kept beside the CSV."""
    result = batch_job_result_file(batch=batch)
    records = result.with_name(storage.RECORDS_NAME) if result is not None else None
    if records is None or not records.is_file():
        return None

    def read() -> Iterator[dict[str, Any]]:
        with records.open(encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    yield json.loads(line)

    return read()


def batch_job_result_name(*, batch: BatchJob) -> str:
    """The download's file name: the uploaded file's stem, so results sort beside their input."""
    return f"{Path(batch.filename or 'articles').stem[:80] or 'articles'}-predictions.csv"


def batch_job_progress(*, batch: BatchJob) -> dict[str, Any]:
    """Percent done, seconds left (None when unknown) and a line saying where it stands."""
    total, done = batch.total, batch.processed or 0
    progress = 100.0 * done / total if total else 0.0
    if batch.status == S.COMPLETED:
        progress = 100.0  # also for an empty file, whose total is 0
    eta = None
    if batch.status == S.RUNNING and batch.started_at and done and total:
        elapsed = time.time() - batch.started_at.timestamp()
        eta = max(0.0, elapsed / done * (total - done))
    if batch.status == S.QUEUED:
        phase = "waiting for the inference worker"
    elif total is None:
        phase = "counting articles"
    else:
        phase = f"{done} of {total} articles"
        if batch.skipped:
            phase += f", {batch.skipped} without text skipped"
    if batch.status == S.RUNNING and batch.cancel_requested:
        phase += " · cancelling"
    return {"progress": round(progress, 1), "eta_seconds": eta, "phase_display": phase}
