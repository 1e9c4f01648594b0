"""Evaluation jobs: a trained model scored on a labelled file on the inference worker, so that
neither the page nor the API waits for it (a real file took 31 s in the web request).

create: check the file's columns (its first rows only), store it, make the queued row, send the
task once that commits. run (the worker): score in chunks (evaluation_scoring.py), writing the
rows scored at most once per PROGRESS_WRITE_INTERVAL, which also brings back a cancel; then the
result, overlap warning included. A file that cannot be scored ends `failed` with the reason.

The file is kept for KEEP_INPUT_SECONDS after the job ends, so the person may evaluate again with
other columns without a second upload; the maintenance sweep (evaluation_jobs_reap) removes it,
and fails the jobs whose worker died or whose message the broker lost.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from classification import faults
from classification.batches import storage
from classification.mlmodels.evaluation import EvaluationColumns, mlmodel_evaluation_columns
from classification.mlmodels.evaluation_model import EvaluationJob
from classification.mlmodels.evaluation_scoring import CHUNK_ROWS, mlmodel_evaluate_file
from classification.models import MLModel
from core import processes
from core.queueing import task_send_on_commit
from projects import policy
from projects.services import activity_record

logger = logging.getLogger(__name__)

S = EvaluationJob.Status
# The Celery task an evaluation's message names (classification/tasks.py registers it).
EVALUATION_TASK = "classification.tasks.evaluation_job_run"
KEEP_INPUT_SECONDS = 24 * 3600
COLUMN_OPTIONS = ("title_column", "abstract_column", "text_column", "label_column",
                  "label_separator")


class EvaluationError(ValueError):
    """The request cannot become an evaluation; the message is for the person."""


def evaluation_folder(*, owner_id: int, job_id: uuid.UUID) -> Path:
    """MEDIA_ROOT/evaluations/<owner id>/<job id hex>/: named by ids only, like a batch's."""
    return Path(settings.MEDIA_ROOT) / "evaluations" / str(int(owner_id)) / job_id.hex


def evaluation_overrides_clean(overrides: dict[str, Any] | None) -> dict[str, str]:
    """Only the column options, as text, without the empty ones."""
    return {key: str(value).strip() for key, value in (overrides or {}).items()
            if key in COLUMN_OPTIONS and value not in (None, "") and str(value).strip()}


def evaluation_preview(columns: EvaluationColumns) -> dict[str, Any]:
    """The preview as the row keeps it (EvaluationJob.preview)."""
    mapping = columns.mapping
    return {
        "columns": list(columns.columns),
        "mapping": {"title": mapping.title, "abstract": mapping.abstract, "label": mapping.label,
                    "label_separator": mapping.label_separator},
        "used": columns.as_dict(), "rows": columns.rows,
        "unknown_in_sample": columns.unknown_in_sample,
    }


def _check(*, ml_model: MLModel, source: Path, filename: str,
           overrides: dict[str, str]) -> EvaluationColumns:
    """Refuse, before anything is kept, what cannot be scored: an untrained model, a file over
    the upload limit, an unreadable file or one whose text or label column cannot be found.
    Reads only the file's first rows."""
    from dataset_management.readers import DatasetFileError

    if not ml_model.is_trained:
        raise EvaluationError("Train the model before evaluating it.")
    size = source.stat().st_size
    if size > settings.MAX_UPLOAD_SIZE:
        raise EvaluationError(f"The file is {size / 2**20:.1f} MB; the limit is "
                              f"{settings.MAX_UPLOAD_SIZE / 2**20:.0f} MB.")
    try:
        columns = mlmodel_evaluation_columns(ml_model=ml_model, path=source, filename=filename,
                                             overrides=overrides)
    except DatasetFileError as exc:
        raise EvaluationError(f"Could not evaluate on that file: {exc.message}") from None
    except ValueError as exc:
        raise EvaluationError(f"Could not evaluate on that file: {exc}") from None
    problem = columns.problem(text_option="abstract_column or text_column",
                              label_option="label_column")
    if problem:
        raise EvaluationError(problem)
    return columns


def evaluation_job_create(
    *, owner: Any, ml_model: MLModel, source: Path, filename: str,
    overrides: dict[str, Any] | None = None,
) -> EvaluationJob:
    """A queued evaluation of `ml_model` on the file at `source` (copied; the caller keeps it).

    RoleRequired unless `owner` may classify in the model's project (evaluating runs the model);
    EvaluationError for a request that cannot be scored (nothing is kept); DiskFull when the
    disk fills while the file is stored; QueueUnavailable when the broker refuses the message
    (the row is then failed and its file removed).
    """
    policy.require(user=owner, action=policy.Action.CLASSIFY, obj=ml_model)
    filename = Path(filename or "evaluation").name[:200] or "evaluation"
    overrides = evaluation_overrides_clean(overrides)
    columns = _check(ml_model=ml_model, source=source, filename=filename, overrides=overrides)
    job = EvaluationJob(owner=owner, ml_model=ml_model, project_id=ml_model.project_id,
                        filename=filename, overrides=overrides,
                        preview=json.loads(json.dumps(evaluation_preview(columns), default=str)),
                        celery_task_id=str(uuid.uuid4()))
    folder = evaluation_folder(owner_id=owner.pk, job_id=job.pk)

    def write(out: IO[bytes]) -> None:
        with source.open("rb") as handle:
            shutil.copyfileobj(handle, out, 1 << 20)

    try:
        job.input_path = storage.relative(
            storage.input_store(folder=folder, filename=filename, write=write))
        with transaction.atomic():
            job.save(force_insert=True)
            activity_record(project=job.project_id, actor=owner, verb="evaluation_started",
                            subject=job, summary=f"{owner.get_username()} started evaluating "
                            f"“{ml_model.name}” on “{filename}”", filename=filename,
                            model=ml_model.name)
            _send_on_commit(job)
    except BaseException:
        # A refused message has already failed the row; any other error leaves no row, so
        # nothing may stay on disk either.
        storage.remove_folder(folder)
        raise
    return job


def _send_on_commit(job: EvaluationJob) -> None:
    job_id, input_path = job.pk, job.input_path

    def unreachable(reason: str) -> None:
        # After the commit: the row exists, so it is failed rather than left queued for a
        # message that was never sent.
        if EvaluationJob.objects.transition(job_id, source=S.QUEUED, target=S.FAILED,
                                            reason=reason, finished_at=timezone.now()):
            _input_discard(input_path)

    task_send_on_commit(name=EVALUATION_TASK, args=(job_id.hex,), task_id=job.celery_task_id,
                        on_unreachable=unreachable)


def evaluation_job_rerun(*, job: EvaluationJob, actor: Any,
                         overrides: dict[str, Any] | None) -> EvaluationJob:
    """A new evaluation of the same file with other columns, while the file is kept."""
    from core import filestore

    if not job.input_path:
        raise EvaluationError("That file is no longer kept (files are kept for a day after "
                              "their evaluation): upload it again.")
    try:
        source = filestore.file_local(name=job.input_path)
    except OSError:
        source = None
    if source is None or not source.is_file():
        raise EvaluationError("That file is no longer kept: upload it again.")
    return evaluation_job_create(owner=actor, ml_model=job.ml_model, source=source,
                                 filename=job.filename, overrides=overrides)


def evaluation_job_cancel(*, job: EvaluationJob, actor: Any = None) -> EvaluationJob:
    """A queued evaluation ends now; a running one stops after the chunk it is scoring."""
    if actor is not None:
        policy.require(user=actor, action=policy.Action.CANCEL, obj=job)
    now = timezone.now()
    if not EvaluationJob.objects.transition(
        job.pk, source=S.QUEUED, target=S.CANCELLED, cancel_requested=True, finished_at=now,
        reason="Cancelled before the inference worker started it.",
    ):
        EvaluationJob.objects.filter(pk=job.pk, status=S.RUNNING).update(
            cancel_requested=True, updated_at=now)
    job.refresh_from_db()
    return job


def _input_discard(input_path: str) -> None:
    if input_path:
        storage.input_discard(input_path)
        storage.remove_folder(storage.absolute(input_path).parent)


# --- The worker side ---------------------------------------------------------------------------


class _Cancelled(Exception):
    pass


class _EndedElsewhere(Exception):
    """The row left `running` under us (the maintenance sweep failed it): stop, write nothing."""


class _Progress:
    """The scoring's progress callback: throttled writes that also bring back a cancel."""

    def __init__(self, job_id: uuid.UUID) -> None:
        self.job_id = job_id
        self.interval = float(settings.PROGRESS_WRITE_INTERVAL)
        self.last = 0.0
        self.done, self.total, self.message = 0, None, ""
        # Test-only (faults are read only under the test settings): time to watch or cancel.
        self.delay = float(faults.active_faults().get("slow_evaluation_chunk") or 0)

    def __call__(self, message: str, done: int, total: int | None) -> None:
        changed = message != self.message
        self.done, self.total, self.message = done, total, message
        if self.delay and done:
            time.sleep(self.delay)
        now = time.monotonic()
        if not changed and now - self.last < self.interval:
            return
        self.last = now
        # One UPDATE writes and checks: it matches only a running, uncancelled row.
        if EvaluationJob.objects.filter(pk=self.job_id, status=S.RUNNING,
                                        cancel_requested=False).update(
                processed=done, total=total, message=message, updated_at=timezone.now()):
            return
        row = EvaluationJob.objects.filter(pk=self.job_id).values("status").first()
        if row and row["status"] == S.RUNNING:
            raise _Cancelled()
        raise _EndedElsewhere(row["status"] if row else "deleted")

    @property
    def counted(self) -> str:
        if self.total is None:
            return "while reading the file"
        return f"after {self.done} of {self.total} rows"


def _finish(job_id: uuid.UUID, *, target: str, reason: str = "", **fields: Any) -> bool:
    return EvaluationJob.objects.transition(job_id, source=S.RUNNING, target=target,
                                            reason=reason[:4000], finished_at=timezone.now(),
                                            **fields)


def _plain(value: Any) -> Any:
    # numpy scalars and arrays in the metrics: the JSON column takes Python values only.
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


def _failure_reason(exc: Exception, *, filename: str) -> str:
    from dataset_management.readers import DatasetFileError

    if isinstance(exc, DatasetFileError):
        return f"Could not evaluate on {filename}: {exc.message}"
    if isinstance(exc, ValueError | UnicodeError | OSError):
        return f"Could not evaluate on {filename}: {exc}"
    return f"The evaluation stopped with an error: {type(exc).__name__}: {exc}"


def evaluation_job_run(*, job_id: uuid.UUID | str) -> str | None:
    """Run one queued evaluation to its end; the final status, or None if this delivery did
    nothing (a duplicate, or one cancelled while it waited)."""
    from core import filestore

    if not EvaluationJob.objects.transition(
        job_id, source=S.QUEUED, target=S.RUNNING, started_at=timezone.now(),
        worker_host=processes.hostname(), worker_pid=os.getpid(), message="starting",
    ):
        logger.info("evaluation %s: not queued any more, nothing to do", job_id)
        return None
    job = EvaluationJob.objects.select_related("ml_model").get(pk=job_id)
    progress = _Progress(job.pk)
    try:
        if not job.ml_model.is_trained:
            raise ValueError("the model is not trained any more; train it again first")
        # The web node that took the upload may be another machine: fetch it from there.
        source = filestore.file_local(name=job.input_path)
        result = mlmodel_evaluate_file(
            ml_model=job.ml_model, path=source, filename=job.filename, overrides=job.overrides,
            on_progress=progress,
            chunk_rows=int(faults.active_faults().get("evaluation_chunk_rows") or CHUNK_ROWS))
    except _Cancelled:
        ended = _finish(job.pk, target=S.CANCELLED, reason=f"Cancelled {progress.counted}.")
        return S.CANCELLED if ended else None
    except _EndedElsewhere as exc:
        logger.warning("evaluation %s ended elsewhere (%s); stopping", job.pk, exc)
        return None
    except Exception as exc:
        reason = _failure_reason(exc, filename=job.filename)
        if reason.startswith("The evaluation stopped"):  # a bug, not a bad file: a traceback
            logger.error("evaluation %s failed", job.pk, exc_info=exc)
        ended = _finish(job.pk, target=S.FAILED, reason=reason, message="")
        return S.FAILED if ended else None
    ended = _finish(job.pk, target=S.COMPLETED, message="done",
                    result=json.loads(json.dumps(result, default=_plain)),
                    processed=progress.total or progress.done, total=progress.total)
    return S.COMPLETED if ended else None
