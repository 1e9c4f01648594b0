"""EvaluationJob: a trained model scored on a labelled file, in the background.

Registered through an import at the end of classification/models.py, so it belongs to the
classification app (and its migrations). Kept out of that module only for its length.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models

from core.transitions import StatusQuerySet


class EvaluationJob(models.Model):
    """One evaluation of a trained model on an uploaded labelled file, on the inference worker.

    The id is a random UUID, shown as 32 hex characters in URLs, like a batch's.

    Allowed transitions (each one conditional ``UPDATE ... WHERE id=? AND status=?``)::

        queued  -> running      the inference worker claimed it (exactly once)
        queued  -> cancelled    cancelled before a worker picked it up
        queued  -> failed       the broker refused its message, or lost it (maintenance)
        running -> completed    every row scored, the result written
        running -> failed       the file cannot be scored, an error, or its worker died
        running -> cancelled    cancel_requested honoured between two chunks

    None of the ends can be left: evaluating again makes a new job (from the same file while
    it is kept: evaluation_jobs.KEEP_INPUT_SECONDS).
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    TRANSITIONS: dict[str, frozenset[str]] = {
        Status.QUEUED: frozenset({Status.RUNNING, Status.CANCELLED, Status.FAILED}),
        Status.RUNNING: frozenset({Status.COMPLETED, Status.FAILED, Status.CANCELLED}),
        Status.COMPLETED: frozenset(),
        Status.FAILED: frozenset(),
        Status.CANCELLED: frozenset(),
    }
    ACTIVE_STATUSES = (Status.QUEUED, Status.RUNNING)
    PROBLEM_STATUSES = (Status.FAILED,)

    PROJECT_LOOKUP = "project"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # The model's project: whoever may see the model sees its evaluations.
    project = models.ForeignKey(
        "projects.Project", on_delete=models.PROTECT, related_name="evaluation_jobs"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="evaluation_jobs"
    )
    ml_model = models.ForeignKey(
        "classification.MLModel", on_delete=models.CASCADE, related_name="evaluation_jobs"
    )
    status = models.CharField(
        max_length=20, choices=Status.choices, default=Status.QUEUED, db_index=True
    )
    # The uploaded name, for display and the reader's format sniffing; never part of a path.
    filename = models.CharField(max_length=255)
    # Relative to MEDIA_ROOT, under evaluations/<owner id>/<job id>/; "" once purged.
    input_path = models.CharField(max_length=500, blank=True)
    # The person's column choices (title_column, abstract_column, label_column,
    # label_separator), as given; the worker maps the rest as the preview did.
    overrides = models.JSONField(default=dict, blank=True)
    # What the web read from the file's first rows when the job was made: its column names,
    # the roles they play and why, and the first rows as read (mlmodels.evaluation). The page
    # offers these columns to evaluate again.
    preview = models.JSONField(default=dict, blank=True)
    total = models.PositiveIntegerField(null=True, blank=True)  # rows to score; None: reading
    processed = models.PositiveIntegerField(default=0)  # rows scored so far
    message = models.CharField(max_length=200, blank=True)  # what the worker is doing now
    reason = models.TextField(blank=True)  # why it failed or was cancelled
    # The metrics the page shows: mlmodel_evaluate_file's result, overlap warning included.
    result = models.JSONField(null=True, blank=True)
    cancel_requested = models.BooleanField(default=False)

    celery_task_id = models.CharField(max_length=255, blank=True)
    worker_host = models.CharField(max_length=255, blank=True)
    worker_pid = models.PositiveIntegerField(null=True, blank=True)

    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Every progress write moves it: the maintenance sweep reads it as the worker's heartbeat.
    updated_at = models.DateTimeField(auto_now=True)

    # No StatusChange history: each evaluation is one short attempt, and its row holds its reason.
    objects = StatusQuerySet.as_manager()

    class Meta:
        app_label = "classification"
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["ml_model", "-created_at"]),
            models.Index(fields=["status", "worker_host"]),
        ]

    def __str__(self) -> str:
        return f"Evaluation {self.pk.hex} ({self.status}) of model {self.ml_model_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.project_id is None and self.ml_model_id is not None:
            self.project_id = self.ml_model.project_id
        super().save(*args, **kwargs)

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE_STATUSES

    @property
    def is_problem(self) -> bool:
        return self.status in self.PROBLEM_STATUSES
