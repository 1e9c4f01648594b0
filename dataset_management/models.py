from typing import Any

from django.conf import settings
from django.db import models

from core.transitions import StatusQuerySet


def dataset_upload_path(instance: "Dataset", filename: str) -> str:
    # Stored under its content hash: the same bytes are the same file, whatever the user called it.
    suffix = filename.rsplit(".", 1)[-1].lower() if "." in filename else "bin"
    return f"datasets/{instance.content_hash}/original.{suffix}"


class Dataset(models.Model):
    """A labelled (or unlabelled) set of articles, parsed once at import.

    The parsed rows live in a Parquet file (`rows_path`) that feeds `datasets` directly; the
    import that creates this row writes that file first and deletes it if the row cannot be saved.
    """

    class Format(models.TextChoices):
        CSV = "csv", "CSV"
        TSV = "tsv", "TSV"
        XLSX = "xlsx", "Excel (XLSX)"
        JSON = "json", "JSON"
        JSONL = "jsonl", "JSON Lines"
        RIS = "ris", "RIS"
        NBIB = "nbib", "PubMed MEDLINE"
        PUBMED_XML = "pubmed_xml", "PubMed XML"

    PROJECT_LOOKUP = "project"

    # PROTECT: a project is deleted only once its rows are moved or deleted (projects/services).
    project = models.ForeignKey(
        "projects.Project", on_delete=models.PROTECT, related_name="datasets"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="datasets", null=True
    )
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    original_file = models.FileField(upload_to=dataset_upload_path, max_length=500, blank=True)
    original_filename = models.CharField(max_length=255, blank=True)
    content_hash = models.CharField(max_length=64, db_index=True, blank=True)
    file_format = models.CharField(max_length=10, choices=Format.choices, blank=True)
    encoding = models.CharField(max_length=40, blank=True)
    rows_path = models.CharField(max_length=500, blank=True)
    text_fields = models.JSONField(default=list, blank=True)
    label_field = models.CharField(max_length=200, blank=True)
    label_names = models.JSONField(default=list, blank=True)
    is_multilabel = models.BooleanField(default=False)
    row_count = models.PositiveIntegerField(default=0)
    label_counts = models.JSONField(default=dict, blank=True)
    split_seed = models.IntegerField(default=42)
    split_ratios = models.JSONField(default=dict, blank=True)
    split_sizes = models.JSONField(default=dict, blank=True)
    report = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["project", "-created_at"])]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.project_id is None:
            from projects.services import project_personal_id

            self.project_id = project_personal_id(user_id=self.owner_id)
        super().save(*args, **kwargs)

    @property
    def is_labelled(self) -> bool:
        return bool(self.label_names)

    @property
    def is_trainable(self) -> bool:
        return len(self.label_names) >= 2


class ImportJob(models.Model):
    """A file being imported into a new Dataset by a worker (dataset_management.imports).

    The web only stores the upload (under MEDIA_ROOT/imports/<owner id>/<job id>/) and creates
    this row; the worker parses it with the same code as every other door
    (services.dataset_create_from_upload) and writes its progress here. Transitions, each one
    conditional ``UPDATE ... WHERE id=? AND status IN (...)``::

        queued  -> running      a worker claimed it (exactly once)
        queued  -> cancelled    cancelled before a worker took it
        queued  -> failed       the broker refused the message, or no worker took it in time
        running -> completed    the Dataset exists (`dataset`)
        running -> failed       the file was refused (`reason` says why), an error, or the
                                worker died (the maintenance sweep, after no heartbeat)
        running -> cancelled    cancel_requested, honoured between chunks of rows

    None of the ends can be left; whatever the end, the stored upload is deleted.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    TRANSITIONS: dict[str, frozenset[str]] = {
        Status.QUEUED: frozenset({Status.RUNNING, Status.CANCELLED, Status.FAILED}),
        # running -> queued: the maintenance sweep retries, once, an import whose worker died
        # (dataset_management/import_maintenance.py).
        Status.RUNNING: frozenset({Status.COMPLETED, Status.FAILED, Status.CANCELLED,
                                   Status.QUEUED}),
        Status.COMPLETED: frozenset(),
        Status.FAILED: frozenset(),
        Status.CANCELLED: frozenset(),
    }
    ACTIVE_STATUSES = (Status.QUEUED, Status.RUNNING)

    PROJECT_LOOKUP = "project"

    # An ended import is a record of what happened, not something the project holds: it goes
    # with the project. One still active refuses the deletion (projects.services
    # project_holdings counts the active rows of such relations), so no worker loses its row.
    project = models.ForeignKey(
        "projects.Project", on_delete=models.CASCADE, related_name="import_jobs"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="import_jobs"
    )
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    # The name the person uploaded: shown, and read for the format; never part of a path.
    filename = models.CharField(max_length=255)
    # Relative to MEDIA_ROOT (imports/<owner id>/<job id>/input.<ext>); "" once deleted.
    input_path = models.CharField(max_length=500, blank=True)
    # {"mapping": {...} | None, "split_ratios": [train, validation, test], "seed": int}
    options = models.JSONField(default=dict, blank=True)
    status = models.CharField(
        max_length=20, choices=Status.choices, default=Status.QUEUED, db_index=True
    )
    rows_read = models.PositiveBigIntegerField(default=0)
    bytes_read = models.PositiveBigIntegerField(default=0)
    total_bytes = models.PositiveBigIntegerField(default=0)
    message = models.CharField(max_length=300, blank=True)  # what the worker is doing now
    reason = models.TextField(blank=True)  # why it failed or was cancelled, in plain words
    cancel_requested = models.BooleanField(default=False)
    dataset = models.ForeignKey(
        Dataset, on_delete=models.SET_NULL, null=True, blank=True, related_name="import_jobs"
    )
    # Sent with this id, so the maintenance sweep can tell a message the broker lost.
    celery_task_id = models.CharField(max_length=255, blank=True)
    worker_host = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Written with each progress write (every PROGRESS_INTERVAL while rows are read) and at
    # each phase: the maintenance sweep fails a running import whose heartbeat went stale.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = StatusQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["project", "-created_at"])]

    def __str__(self) -> str:
        return f"Import {self.pk} of {self.filename} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE_STATUSES

    @property
    def fraction(self) -> float | None:
        """How far through the file the reader is (0..1); None when it cannot tell (a workbook
        is read through its zip, not byte by byte)."""
        if self.status == self.Status.COMPLETED:
            return 1.0
        if not self.total_bytes or not self.bytes_read:
            return 0.0 if self.status == self.Status.QUEUED else None
        return min(1.0, self.bytes_read / self.total_bytes)
