"""Imports as background jobs: the web stores the upload and queues an ImportJob; a worker reads it.

The web request does only what is cheap and bounded: it stores the file (hashing it as it
streams), refuses a duplicate, and reads the first rows the way the preview does, so a file
whose columns cannot work is refused while the person waits (the page's message, the API's
400). Everything that grows with the file (reading every row, the report, the split, the
Parquet rows) runs on a worker (the default queue: see TASK) through
services.dataset_create_from_upload, the code every other door (the command line, the review
loop, conflict resolution) runs in-process, so an import job makes exactly the dataset they
would. The worker writes rows and bytes read at most every PROGRESS_INTERVAL, and reads the
cancel back in the same write.

A collection (several files, or files added to one) and a near-match confirm are the same job
with options["collection"] / options["near_matches"]: collection_jobs.py stores and runs them.

Files: MEDIA_ROOT/imports/<owner id>/<job id hex>/input.<ext>, named on the row relative to
MEDIA_ROOT and published to the shared storage for a worker on another node. It is deleted
when the job ends, whatever the end; a completed import's bytes live on as the dataset's
original file.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files import File
from django.db import transaction
from django.utils import timezone

from core import filestore
from core.diskspace import DiskFull, disk_full_refused, is_disk_full
from core.processes import hostname
from core.queueing import task_send_on_commit
from projects import policy
from projects.models import Project

from . import selectors, services
from .articles import ArticleStream
from .models import ImportJob
from .preview import dataset_preview
from .readers import DatasetFileError
from .splitting import DEFAULT_RATIOS, split_ratios_validate
from .upload_files import check_size, safe_filename, spool

logger = logging.getLogger(__name__)

# The default queue, which the inference worker serves (start_m1.sh): an import is short next
# to a training and must never wait behind one on the training queue; it does not share the
# inference queue so a long import never delays a batch's message (it only shares a worker).
TASK = "dataset_management.tasks.import_run"
PROGRESS_INTERVAL = 0.5  # seconds between two progress writes (and cancel checks)
REPORT_EVERY = 500  # records between two looks at the clock: cheap next to parsing them
S = ImportJob.Status


class ImportCancelled(Exception):
    """Raised between two chunks of rows once the person asked to cancel."""


class ImportStopped(Exception):
    """Raised when the row left `running` under the worker (the sweep failed it)."""


def imports_root() -> Path:
    return Path(settings.MEDIA_ROOT) / "imports"


def _input_name(filename: str) -> str:
    # The reader sniffs the format from the original name (kept on the row); on disk the file
    # keeps only a tidy extension.
    suffix = "".join(c for c in Path(filename).suffix.lower() if c.isalnum())[:8]
    return f"input.{suffix}" if suffix else "input"


# --- the web's side ------------------------------------------------------------------------------


def import_job_create(
    *, owner: Any, project: Project, uploaded_file: Any, name: str, description: str = "",
    mapping: dict[str, Any] | None = None,
    split_ratios: tuple[float, ...] | list[float] = DEFAULT_RATIOS, seed: int = 42,
) -> ImportJob:
    """Store the upload and queue its import into `project`; DatasetFileError (nothing kept)
    for a file refused at once: too large, a duplicate in the project, bad ratios, or first
    rows that cannot be read with these columns. core.diskspace.DiskFull when the disk fills,
    core.queueing.QueueUnavailable when the broker is down (no row or upload is then kept)."""
    policy.require(user=owner, action=policy.Action.UPLOAD, project=project)
    try:
        ratios = split_ratios_validate(tuple(split_ratios))
    except ValueError as exc:
        raise DatasetFileError(str(exc)) from None
    check_size(uploaded_file)
    filename = safe_filename(uploaded_file.name)
    job_key = uuid.uuid4().hex
    folder = imports_root() / str(int(owner.pk)) / job_key
    source = folder / _input_name(filename)
    try:
        content_hash = input_store(uploaded_file, source)
        existing = selectors.dataset_with_content(project_id=project.pk,
                                                  content_hash=content_hash)
        if existing is not None:
            raise DatasetFileError(f"This file was already uploaded as dataset "
                                   f"'{existing.name}' (id {existing.pk}).")
        _first_rows_check(source, filename=filename, mapping=mapping)
        filestore.file_publish(name=media_relative(source))  # for a worker on another node
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    options = {"mapping": mapping or None, "split_ratios": list(ratios), "seed": int(seed)}
    return import_job_queue(owner=owner, project=project, name=name, description=description,
                            filename=filename, input_path=media_relative(source), options=options,
                            total_bytes=source.stat().st_size, job_key=job_key)


def import_job_queue(*, owner: Any, project: Project, name: str, description: str,
                     filename: str, input_path: str, options: dict[str, Any], total_bytes: int,
                     job_key: str) -> ImportJob:
    """The row for stored input (under imports_root()/<owner>/<job_key>/) and its message,
    sent once the row commits; a broker that refuses it removes the row and the input."""
    with transaction.atomic():
        job = ImportJob.objects.create(
            project=project, owner=owner, name=name[:200], description=description,
            filename=filename[:255], input_path=input_path, options=options,
            total_bytes=total_bytes, celery_task_id=job_key, message="Waiting for a worker",
        )

        def unreachable(reason: str) -> None:
            # The 503 says nothing was started: no row is left either, and no stored upload.
            _input_discard(job)
            ImportJob.objects.filter(pk=job.pk, status=S.QUEUED).delete()

        task_send_on_commit(name=TASK, args=(job.pk,), task_id=job_key,
                            queue=settings.QUEUE_DEFAULT, on_unreachable=unreachable)
    logger.info("Queued import %s of %s (%s bytes)", job.pk, filename, job.total_bytes)
    return job


def input_store(uploaded_file: Any, source: Path) -> str:
    """Write the upload as input.<ext>.part, then rename it: a worker never sees half a file.
    Returns its SHA-256; DiskFull, with the partial file gone, when the disk fills."""
    part = source.with_name(source.name + ".part")
    with disk_full_refused():
        source.parent.mkdir(parents=True, exist_ok=True)
        content_hash = spool(uploaded_file, part)
        os.replace(part, source)
    return content_hash


def _first_rows_check(source: Path, *, filename: str, mapping: dict[str, Any] | None) -> None:
    """The preview's reading of the first rows (bounded, whatever the file's size): a format,
    encoding or column problem there is refused now rather than by the worker."""
    with source.open("rb") as handle, disk_full_refused():
        preview = dataset_preview(uploaded_file=File(handle, name=filename),
                                  mapping_overrides=mapping)
    if not preview.report.get("rows_sampled"):
        raise DatasetFileError("The file has a header but no data rows.")


def import_job_cancel(*, user: Any, job: ImportJob) -> ImportJob:
    """A queued import ends cancelled at once; a running one is asked to stop, which its
    worker does between two chunks of rows, removing everything it wrote. An ended one is
    left as it is."""
    policy.require(user=user, action=policy.Action.CANCEL, obj=job)
    who = user.get_username() if user is not None else "the system"
    reason = f"Cancelled by {who}; nothing was saved."
    if ImportJob.objects.transition(job.pk, source=S.QUEUED, target=S.CANCELLED, reason=reason,
                                    finished_at=timezone.now(), message=""):
        _input_discard(job)
    else:
        ImportJob.objects.filter(pk=job.pk, status=S.RUNNING).update(
            cancel_requested=True, reason=reason, updated_at=timezone.now())
    job.refresh_from_db()
    return job


# --- the worker's side ---------------------------------------------------------------------------


class ImportReporter:
    """services.ImportProgress for one job: follows the records beneath the parser and writes
    rows and bytes read (and the heartbeat) at most every PROGRESS_INTERVAL. The same
    conditional UPDATE reads the cancel back: it changes no row once cancel_requested is set
    or the row left `running`, and the reporter then raises, between two chunks of rows."""

    def __init__(self, *, job_id: int, total_bytes: int = 0) -> None:
        self.job_id = job_id
        self.total_bytes = total_bytes
        self.rows = 0
        self.bytes_read: int | None = None
        self._written_at = 0.0

    def attach(self, articles: ArticleStream) -> None:
        self.follow(articles, message="Reading rows",
                    done="Checking labels, splitting and saving the rows")

    def follow(self, articles: ArticleStream, *, message: str, done: str, offset: int = 0,
               size: int | None = None, counted: bool = True) -> None:
        """Report while `articles` are read: rows and bytes (after `offset` bytes of earlier
        files; `size` is this file's) when `counted`, else only the heartbeat, the message and
        the cancel."""
        position = _byte_position(articles)
        records = articles.stream.records

        def reported() -> Any:
            for seen, record in enumerate(records, start=1):
                yield record
                self.rows += counted
                if seen % REPORT_EVERY == 0:
                    if counted:
                        where = position()
                        self.bytes_read = None if where is None else offset + where
                    self.write(message, force=False)
            if counted:  # every record read: the whole file was (its reader has closed it)
                self.bytes_read = offset + (size if size is not None else
                                            self.total_bytes or position() or 0)
            # The last look for a cancel: what follows (labels, split, saving) takes seconds.
            self.write(done, force=True)

        articles.stream.records = reported()

    def write(self, message: str, *, force: bool) -> None:
        now = time.monotonic()
        if not force and now - self._written_at < PROGRESS_INTERVAL:
            return
        self._written_at = now
        fields: dict[str, Any] = {"rows_read": self.rows, "message": message,
                                  "heartbeat_at": timezone.now(), "updated_at": timezone.now()}
        if self.bytes_read is not None:
            fields["bytes_read"] = self.bytes_read
        changed = ImportJob.objects.filter(pk=self.job_id, status=S.RUNNING,
                                           cancel_requested=False).update(**fields)
        if not changed:
            state = ImportJob.objects.filter(pk=self.job_id).values_list(
                "status", "cancel_requested").first()
            if state is not None and state == (S.RUNNING, True):
                raise ImportCancelled()
            raise ImportStopped()


def _byte_position(articles: ArticleStream) -> Any:
    """How far into the file the reader is, in bytes, as far as it can be known.

    Every text reader hands its open file's close() to its RecordStream, so the file is found
    through it without changing the readers; its binary buffer's tell() is exact to the read
    chunk. A workbook is read through its zip: no position (None), the rows still count."""
    handle = getattr(articles.stream.close, "__self__", None)
    handle = getattr(handle, "buffer", handle)
    tell = getattr(handle, "tell", None)

    def position() -> int | None:
        try:
            return int(tell()) if tell is not None else None
        except (OSError, ValueError):  # closed, or not seekable
            return None

    return position


def import_job_run(*, job_id: int) -> ImportJob | None:
    """Run a queued import (the task calls this; tests and scripts may call it in-process):
    claim it exactly once, import the file with services.dataset_create_from_upload, and end
    the row completed with its dataset, failed with the reason, or cancelled. Nothing is left
    of a failed or cancelled import. None when the job was not queued any more."""
    if not ImportJob.objects.transition(
            job_id, source=S.QUEUED, target=S.RUNNING, started_at=timezone.now(),
            heartbeat_at=timezone.now(), worker_host=hostname(), message="Reading rows"):
        return None
    job = ImportJob.objects.select_related("owner").get(pk=job_id)
    reporter = ImportReporter(job_id=job_id, total_bytes=job.total_bytes)
    dataset, target, reason, stopping = None, S.COMPLETED, "", None
    try:
        dataset = _import(job, reporter)
    except ImportCancelled:
        target = S.CANCELLED
        reason = job_reason(job_id) or f"Cancelled after {reporter.rows:,} rows; nothing saved."
    except ImportStopped:
        target = None
        logger.warning("import %s left running while it ran (the sweep?): undone", job_id)
    except BaseException as exc:
        target, reason = S.FAILED, _failure_reason(job_id, exc)
        stopping = None if isinstance(exc, Exception) else exc  # a worker shutting down
    # The upload goes before the row says it ended: whoever reads an ended row finds no input.
    _input_discard(job)
    if target is not None and not _end(job, target=target, reporter=reporter, reason=reason,
                                       dataset=dataset) and dataset is not None:
        # The sweep failed it meanwhile (its heartbeat looked stale): its reason stands, so
        # the dataset it would contradict goes.
        services.dataset_delete(dataset=dataset)
    if stopping is not None:
        raise stopping
    job.refresh_from_db()
    return job


def _import(job: ImportJob, reporter: ImportReporter) -> Any:
    options = job.options or {}
    if {"by_hand", "unmerge"} & set(options.get("near_matches") or {}):  # see unmerge.py
        from .unmerge import person_job_import

        return person_job_import(job=job, reporter=reporter)
    if options.get("collection") or options.get("near_matches"):  # see collection_jobs.py
        from .collection_jobs import collection_job_import, near_matches_job_import

        run = collection_job_import if options.get("collection") else near_matches_job_import
        return run(job=job, reporter=reporter)
    path = filestore.file_local(name=job.input_path)
    with path.open("rb") as handle:
        return services.dataset_create_from_upload(
            owner=job.owner, project=job.project_id, uploaded_file=File(handle, job.filename),
            name=job.name, description=job.description, mapping=options.get("mapping") or None,
            split_ratios=tuple(options.get("split_ratios") or DEFAULT_RATIOS),
            seed=int(options.get("seed", 42)), progress=reporter,
        )


def _failure_reason(job_id: int, exc: BaseException) -> str:
    if isinstance(exc, DatasetFileError | ValueError):
        return str(exc)  # the file's problem, in the words every door uses
    if isinstance(exc, DiskFull):
        return exc.message
    if is_disk_full(exc):
        return DiskFull().message
    logger.error("import %s failed", job_id, exc_info=exc)
    return f"The import failed ({type(exc).__name__}: {exc}); nothing was saved."


def job_reason(job_id: int) -> str:
    return ImportJob.objects.filter(pk=job_id).values_list("reason", flat=True).first() or ""


def _end(job: ImportJob, *, target: str, reporter: ImportReporter, reason: str = "",
         dataset: Any = None) -> bool:
    fields: dict[str, Any] = {"rows_read": reporter.rows, "finished_at": timezone.now(),
                              "reason": reason, "message": "", "heartbeat_at": timezone.now()}
    if reporter.bytes_read is not None:
        fields["bytes_read"] = reporter.bytes_read
    if dataset is not None:
        fields["dataset"] = dataset
    return ImportJob.objects.transition(job.pk, source=S.RUNNING, target=target, **fields)


def _input_discard(job: ImportJob) -> None:
    """The stored upload goes (every file of a collection), this node's copy and the shared
    one, and the job's folder, imports/<owner>/<job key>/ (the first three parts of a path)."""
    if not job.input_path:
        return
    media = Path(settings.MEDIA_ROOT)
    files = ((job.options or {}).get("collection") or {}).get("files") or []
    for name in [job.input_path, *(f["path"] for f in files)]:
        (media / name).unlink(missing_ok=True)
        filestore.file_delete(name=name)
    shutil.rmtree(media.joinpath(*Path(job.input_path).parts[:3]), ignore_errors=True)
    ImportJob.objects.filter(pk=job.pk).update(input_path="")


def media_relative(path: Path) -> str:
    return str(path.relative_to(Path(settings.MEDIA_ROOT)))
