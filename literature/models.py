"""Saved PubMed searches that re-run, and each run's record.

A SavedSearch names a PubMed query (with optional publication-date bounds), the collection
(a Dataset) that its new articles join, and the model that classifies them. Each run is a
SearchRun; the run's numbers and digest stay after the search changes.

SearchRun states (each move a conditional UPDATE that must change exactly one row)::

    queued      -> running       a worker claimed it (a duplicate delivery finds it running)
    queued      -> failed        the broker refused the message, or it was lost
    running     -> classifying   the new articles were imported; a batch classifies them
    running     -> completed     imported (or nothing new), no model to classify with
    running     -> failed        PubMed, the import or the worker failed: `reason` says which
    classifying -> completed     the batch ended (its counts make the digest; a failed batch
                                 leaves the articles imported and says so in the digest)

None of the ends can be left.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from core.transitions import StatusQuerySet


class SavedSearch(models.Model):
    PROJECT_LOOKUP = "project"

    class Schedule(models.TextChoices):
        OFF = "off", "Off (on demand only)"
        DAILY = "daily", "Daily"
        WEEKLY = "weekly", "Weekly"
        MONTHLY = "monthly", "Monthly"

    # CASCADE, unlike the data rows: a query means nothing without its project, and
    # projects.services.project_delete already refuses a project that holds datasets or models.
    project = models.ForeignKey("projects.Project", on_delete=models.CASCADE,
                                related_name="saved_searches")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True,
                              blank=True, related_name="saved_searches")
    name = models.CharField(max_length=200)
    query = models.TextField()
    # Publication-date bounds (PubMed's pdat); either may be left open.
    mindate = models.DateField(null=True, blank=True)
    maxdate = models.DateField(null=True, blank=True)
    # The collection new articles join: each run that finds some makes a new version of it and
    # points here at that version. Empty: the first run makes the collection.
    collection = models.ForeignKey("dataset_management.Dataset", on_delete=models.SET_NULL,
                                   null=True, blank=True, related_name="saved_searches")
    ml_model = models.ForeignKey("classification.MLModel", on_delete=models.SET_NULL,
                                 null=True, blank=True, related_name="saved_searches")
    schedule = models.CharField(max_length=10, choices=Schedule.choices, default=Schedule.OFF)
    last_run_at = models.DateTimeField(null=True, blank=True)
    # When beat should next start it (None: never, the schedule is off).
    next_run_at = models.DateTimeField(null=True, blank=True, db_index=True)
    # The last run's end, for the list: its status and, when it failed, why.
    last_status = models.CharField(max_length=20, blank=True)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "pk"]
        indexes = [models.Index(fields=["project", "name"])]

    def __str__(self) -> str:
        return self.name


class SearchRun(models.Model):
    PROJECT_LOOKUP = "search__project"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Searching PubMed"
        CLASSIFYING = "classifying", "Classifying the new articles"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"

    TRANSITIONS: dict[str, frozenset[str]] = {
        Status.QUEUED: frozenset({Status.RUNNING, Status.FAILED}),
        Status.RUNNING: frozenset({Status.CLASSIFYING, Status.COMPLETED, Status.FAILED}),
        Status.CLASSIFYING: frozenset({Status.COMPLETED}),
        Status.COMPLETED: frozenset(),
        Status.FAILED: frozenset(),
    }
    # At most one of these per search at a time (a partial unique index).
    SEARCHING_STATUSES = (Status.QUEUED, Status.RUNNING)
    ACTIVE_STATUSES = (Status.QUEUED, Status.RUNNING, Status.CLASSIFYING)

    class Trigger(models.TextChoices):
        MANUAL = "manual", "On demand"
        SCHEDULE = "schedule", "Schedule"

    search = models.ForeignKey(SavedSearch, on_delete=models.CASCADE, related_name="runs")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    trigger = models.CharField(max_length=10, choices=Trigger.choices, default=Trigger.MANUAL)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL,
                                     null=True, blank=True, related_name="+")
    query = models.TextField(blank=True)          # the query as it was run
    found = models.PositiveIntegerField(default=0)      # PubMed's count for the query
    new = models.PositiveIntegerField(default=0)        # PMIDs not yet in the collection
    imported = models.PositiveIntegerField(default=0)   # rows the new version gained
    pmids = models.JSONField(default=list, blank=True)  # the new PMIDs, in PubMed's order
    requests = models.PositiveIntegerField(default=0)   # E-utilities calls made
    dataset = models.ForeignKey("dataset_management.Dataset", on_delete=models.SET_NULL,
                                null=True, blank=True, related_name="+")
    batch = models.ForeignKey("classification.BatchJob", on_delete=models.SET_NULL, null=True,
                              blank=True, related_name="+")
    digest = models.TextField(blank=True)
    # [{"pmid", "title", "predicted_labels"}] in PubMed's order; label -> articles predicted.
    digest_items = models.JSONField(default=list, blank=True)
    predicted_counts = models.JSONField(default=dict, blank=True)
    reason = models.TextField(blank=True)
    emailed_to = models.CharField(max_length=254, blank=True)
    celery_task_id = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Every page fetched moves it: maintenance reads it as the run's heartbeat.
    updated_at = models.DateTimeField(auto_now=True)

    objects = StatusQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [models.UniqueConstraint(
            fields=["search"], condition=Q(status__in=["queued", "running"]),
            name="literature_one_searching_run_per_search")]
        indexes = [models.Index(fields=["status", "updated_at"])]

    def __str__(self) -> str:
        return f"run {self.pk} of saved search {self.search_id} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE_STATUSES
