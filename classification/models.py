from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone

from core.transitions import StatusQuerySet, transition_sources


class MLModel(models.Model):
    """A classifier: what to train (type, dataset, parameters) and, once trained, the artifact."""

    PROJECT_LOOKUP = "project"

    class Status(models.TextChoices):
        PENDING = "pending", "Not trained yet"
        TRAINING = "training", "Training"
        TRAINED = "trained", "Trained"
        FAILED = "failed", "Failed"

    project = models.ForeignKey(
        "projects.Project", on_delete=models.PROTECT, related_name="ml_models"
    )
    # Who made it: shown, and used for nothing else (the project decides who may do what).
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ml_models", null=True
    )
    name = models.CharField(max_length=200)
    model_type = models.CharField(max_length=40)
    # Deleting a dataset must not delete the models trained on it: they still classify.
    dataset = models.ForeignKey(
        "dataset_management.Dataset",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="ml_models",
    )
    parameters = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    metrics = models.JSONField(default=dict, blank=True)
    label_names = models.JSONField(default=list, blank=True)
    is_multilabel = models.BooleanField(default=False)
    artifact_path = models.CharField(max_length=500, blank=True)
    # With shared storage, the content hash of the published artifact (core/filestore.py):
    # every node loads exactly these bytes, fetched once into its cache. Empty on one machine.
    artifact_digest = models.CharField(max_length=64, blank=True)
    device_used = models.CharField(max_length=40, blank=True)
    device_plan = models.JSONField(default=dict, blank=True)
    library_versions = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    trained_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["project", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.name} ({self.model_type})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        # The seed's shell example creates models without an owner: they belong to the dataset's.
        if self.owner_id is None and self.dataset_id is not None:
            self.owner_id = self.dataset.owner_id
        if self.project_id is None:
            self.project_id = project_for_new_row(source=self.dataset, owner_id=self.owner_id)
        super().save(*args, **kwargs)

    @property
    def is_trained(self) -> bool:
        return self.status == self.Status.TRAINED and bool(self.artifact_path)


def project_for_new_row(*, source: Any = None, owner_id: int | None = None) -> int | None:
    """A row saved without a project joins its source's project, else its owner's personal one.

    The shell, the seed's examples and old callers create rows by owner alone; this keeps
    "no row belongs to nobody" true for them too.
    """
    if source is not None:
        return source.project_id
    from projects.services import project_personal_id

    return project_personal_id(user_id=owner_id)


class TransitionQuerySet(StatusQuerySet):
    """Status changes that also write their StatusChange history row."""

    def transition(
        self, pk: Any, *, source: str | list[str], target: str, actor: Any = None, **fields: Any
    ) -> bool:
        """Move one row from `source` to `target` with a conditional UPDATE, and record it.

        Returns True only when exactly this call changed the row, so a duplicate delivery, a
        racing worker, a reaper or a late watchdog that lost the race does nothing, and writes
        no StatusChange either. `actor` is the user who asked for it; None means the system.
        """
        sources = transition_sources(self.model, source=source, target=target)
        fields.setdefault("updated_at", timezone.now())
        reason = fields.get("reason", "")
        # One UPDATE per possible source (only resume names several): the one that changes the
        # row says which state it left, which the history row needs and UPDATE cannot return.
        # No state may move to itself, so after a hit the later UPDATEs could match nothing.
        with transaction.atomic(using=self.db, savepoint=False):
            for state in sources:
                if self.filter(pk=pk, status=state).update(status=target, **fields) == 1:
                    StatusChange.objects.using(self.db).create(
                        **{StatusChange.subject_field(self.model) + "_id": pk},
                        source=state, target=target, at=fields["updated_at"],
                        reason=reason if isinstance(reason, str) else "",
                        actor_id=getattr(actor, "pk", None),
                    )
                    return True
        return False


class TrainingJobQuerySet(TransitionQuerySet):
    pass


def training_queue_default() -> str:
    """The CPU training queue: where the seed's `delay()` and rows made before routing went."""
    return settings.QUEUE_TRAINING


class TrainingJob(models.Model):
    """One attempt series at training an MLModel, supervised from the Celery worker.

    Allowed transitions (each one conditional ``UPDATE ... WHERE id=? AND status=?``)::

        queued  -> running      the worker claimed it (exactly once)
        queued  -> cancelled    cancelled before a worker picked it up
        queued  -> failed       it could not even start (dataset gone, unknown model type)
        running -> completed    artifact saved and verified to load back
        running -> failed       exception, crash signal, hard time limit
        running -> stalled      no heartbeat or no progress past the timeout; worker died
        running -> cancelled    cancel_requested honoured (or enforced after the grace period)
        failed | stalled | cancelled -> queued   resume: attempt + 1, from the last checkpoint
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"
        STALLED = "stalled", "Stalled"
        CANCELLED = "cancelled", "Cancelled"

    class Phase(models.TextChoices):
        QUEUED = "queued", "Queued"
        PREPARING = "preparing", "Preparing"
        LOADING_MODEL = "loading_model", "Loading model"
        DOWNLOADING = "downloading", "Downloading model"
        TOKENIZING = "tokenizing", "Tokenizing"
        TRAINING = "training", "Training"
        EVALUATING = "evaluating", "Evaluating"
        SAVING = "saving", "Saving"
        DONE = "done", "Done"

    TRANSITIONS: dict[str, frozenset[str]] = {
        Status.QUEUED: frozenset({Status.RUNNING, Status.CANCELLED, Status.FAILED}),
        Status.RUNNING: frozenset(
            {Status.COMPLETED, Status.FAILED, Status.STALLED, Status.CANCELLED}
        ),
        Status.FAILED: frozenset({Status.QUEUED}),
        Status.STALLED: frozenset({Status.QUEUED}),
        Status.CANCELLED: frozenset({Status.QUEUED}),
        Status.COMPLETED: frozenset(),
    }
    ACTIVE_STATUSES = (Status.QUEUED, Status.RUNNING)
    RESUMABLE_STATUSES = (Status.FAILED, Status.STALLED, Status.CANCELLED)
    PROBLEM_STATUSES = (Status.FAILED, Status.STALLED)  # drawn in red: something went wrong

    PROJECT_LOOKUP = "ml_model__project"

    ml_model = models.ForeignKey(MLModel, on_delete=models.CASCADE, related_name="training_jobs")
    status = models.CharField(
        max_length=20, choices=Status.choices, default=Status.QUEUED, db_index=True
    )
    phase = models.CharField(max_length=20, choices=Phase.choices, default=Phase.QUEUED)
    config = models.JSONField(default=dict, blank=True)

    progress_percentage = models.FloatField(default=0.0)
    current_epoch = models.FloatField(default=0.0)
    total_epochs = models.PositiveIntegerField(default=0)
    current_step = models.PositiveIntegerField(default=0)
    total_steps = models.PositiveIntegerField(default=0)
    eta_seconds = models.FloatField(null=True, blank=True)
    last_loss = models.FloatField(null=True, blank=True)

    celery_task_id = models.CharField(max_length=255, blank=True)
    # The broker queue its message was sent to (classification/jobs/routing.py), chosen again at
    # each resume: the CPU training queue or the GPU one.
    queue = models.CharField(max_length=200, default=training_queue_default)
    worker_host = models.CharField(max_length=255, blank=True)
    worker_pid = models.PositiveIntegerField(null=True, blank=True)
    child_pid = models.PositiveIntegerField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    progress_at = models.DateTimeField(null=True, blank=True)
    cancel_requested = models.BooleanField(default=False)

    reason = models.TextField(blank=True)
    metrics_history = models.JSONField(default=list, blank=True)
    # A model search's trials as its job page shows them, best first (engine/search.py): a
    # copy the child writes with its progress; the study itself lives in Optuna's tables.
    leaderboard = models.JSONField(default=list, blank=True)
    log_tail = models.TextField(blank=True)
    device_plan = models.JSONField(default=dict, blank=True)
    checkpoint_path = models.CharField(max_length=500, blank=True)
    # With shared storage, the newest complete checkpoint as published while training
    # (classification/jobs/checkpoint_sync.py), so a resume on another node starts from it.
    synced_checkpoint = models.CharField(max_length=100, blank=True)
    synced_checkpoint_digest = models.CharField(max_length=64, blank=True)
    attempt = models.PositiveIntegerField(default=1)
    # Wall time the earlier attempts ran (claim to end), added at each resume: a search's time
    # budget counts it, so Cancel and Resume never hand a search extra time.
    spent_seconds = models.FloatField(default=0.0)

    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = TrainingJobQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "worker_host"])]

    def __str__(self) -> str:
        return f"Job {self.pk} ({self.status}) for {self.ml_model_id}"

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE_STATUSES

    @property
    def is_resumable(self) -> bool:
        return self.status in self.RESUMABLE_STATUSES

    @property
    def is_problem(self) -> bool:
        return self.status in self.PROBLEM_STATUSES

    @property
    def heartbeat_age_seconds(self) -> float | None:
        if self.heartbeat_at is None:
            return None
        return (timezone.now() - self.heartbeat_at).total_seconds()

    @property
    def on_gpu_queue(self) -> bool:
        return self.queue == settings.QUEUE_TRAINING_GPU


class BatchJobQuerySet(TransitionQuerySet):
    def owned_by(self, owner: Any) -> BatchJobQuerySet:
        return self.filter(owner=owner)


class BatchJob(models.Model):
    """A file of articles classified in the background on the inference worker.

    The id is a random UUID, shown as 32 hex characters in URLs and folder names, so a batch
    address reveals nothing and cannot be guessed (reads are owner-scoped besides).

    Allowed transitions (each one conditional ``UPDATE ... WHERE id=? AND status=?``)::

        queued  -> running      the inference worker claimed it (exactly once)
        queued  -> cancelled    cancelled before a worker picked it up
        queued  -> failed       the broker could not take the message; nothing will run it
        running -> completed    result.csv written (temp file + os.replace)
        running -> failed       unreadable file, an error, or its worker died (the reaper)
        running -> cancelled    cancel_requested honoured between two chunks
        running -> queued       its worker died: sent again, it resumes from its last
                                completed chunk (batches/checkpoint.py; at most 3 times)

    None of the ends can be left.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    TRANSITIONS: dict[str, frozenset[str]] = {
        Status.QUEUED: frozenset({Status.RUNNING, Status.CANCELLED, Status.FAILED}),
        Status.RUNNING: frozenset({Status.COMPLETED, Status.FAILED, Status.CANCELLED,
                                   Status.QUEUED}),
        Status.COMPLETED: frozenset(),
        Status.FAILED: frozenset(),
        Status.CANCELLED: frozenset(),
    }
    ACTIVE_STATUSES = (Status.QUEUED, Status.RUNNING)
    PROBLEM_STATUSES = (Status.FAILED,)

    PROJECT_LOOKUP = "project"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # The model's project: a batch is seen by whoever may see the model that classified it.
    project = models.ForeignKey(
        "projects.Project", on_delete=models.PROTECT, related_name="batch_jobs"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="batch_jobs"
    )
    ml_model = models.ForeignKey(MLModel, on_delete=models.CASCADE, related_name="batch_jobs")
    status = models.CharField(
        max_length=20, choices=Status.choices, default=Status.QUEUED, db_index=True
    )
    # The name the person uploaded, for display and for the reader's format sniffing; it is
    # never part of a path on disk.
    filename = models.CharField(max_length=255)
    # Both relative to MEDIA_ROOT, under batches/<owner id>/<batch id>/.
    input_path = models.CharField(max_length=500, blank=True)
    result_path = models.CharField(max_length=500, blank=True)
    total = models.PositiveIntegerField(null=True, blank=True)  # None while counting
    processed = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    reason = models.TextField(blank=True)
    cancel_requested = models.BooleanField(default=False)
    # Asked for at creation: a top_terms column saying which words drove each label. Costs
    # milliseconds per article for TF-IDF, about a second of every core for a transformer.
    top_terms = models.BooleanField(default=False)
    # Asked for at creation: which per-label thresholds choose the labels, each label's F1-tuned
    # one or its recall-target one (more labels); its results say which.
    threshold = models.CharField(max_length=10, default="f1",
                                 choices=[("f1", "F1-tuned"), ("recall", "Recall target")])
    # 0: classified in one piece. N >= 2: cut into N BatchShard rows that every live inference
    # worker runs (batches/shards.py); `shard_layout` is what each shard's CSV needs of the
    # file (format, columns), `leader` the process cutting or assembling ("" when none).
    shard_count = models.PositiveIntegerField(default=0)
    shard_layout = models.JSONField(default=dict, blank=True)
    leader = models.CharField(max_length=300, blank=True)

    celery_task_id = models.CharField(max_length=255, blank=True)
    worker_host = models.CharField(max_length=255, blank=True)
    worker_pid = models.PositiveIntegerField(null=True, blank=True)

    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Every progress write moves it: the reaper reads it as the runner's heartbeat.
    updated_at = models.DateTimeField(auto_now=True)

    objects = BatchJobQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["project", "-created_at"]),
            models.Index(fields=["status", "worker_host"]),
        ]

    def __str__(self) -> str:
        return f"Batch {self.pk.hex} ({self.status}) with model {self.ml_model_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.project_id is None:
            self.project_id = project_for_new_row(source=self.ml_model,
                                                  owner_id=self.owner_id)
        super().save(*args, **kwargs)

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE_STATUSES

    @property
    def is_problem(self) -> bool:
        return self.status in self.PROBLEM_STATUSES


class StatusChange(models.Model):
    """One status a training job or a batch entered: from, to, why, when and who asked.

    Append-only. Written by ``TransitionQuerySet.transition`` in the transaction of the UPDATE
    it records (so a transition that lost a race leaves no row), and once when the job or batch
    is created (source ""; classification/history/services.py). The job's own `reason` is
    cleared by a resume; these rows keep every earlier one.
    """

    job = models.ForeignKey(
        TrainingJob, on_delete=models.CASCADE, null=True, blank=True,
        related_name="status_changes",
    )
    batch = models.ForeignKey(
        BatchJob, on_delete=models.CASCADE, null=True, blank=True, related_name="status_changes"
    )
    source = models.CharField(max_length=20, blank=True)  # "" = created in `target`
    target = models.CharField(max_length=20)
    reason = models.TextField(blank=True)
    at = models.DateTimeField(default=timezone.now)
    # The user who asked (cancel, resume, creating it); null = the system (a worker, the
    # reaper, a watchdog), or a user since deleted.
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
        related_name="status_changes",
    )

    SUBJECT_FIELDS = {"classification.TrainingJob": "job", "classification.BatchJob": "batch"}

    class Meta:
        ordering = ["at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=(models.Q(job__isnull=False, batch__isnull=True)
                           | models.Q(job__isnull=True, batch__isnull=False)),
                name="status_change_job_xor_batch",
            )
        ]

    def __str__(self) -> str:
        subject = f"job {self.job_id}" if self.job_id else f"batch {self.batch_id}"
        return f"{subject}: {self.source or '-'} -> {self.target} at {self.at:%Y-%m-%d %H:%M:%S}"

    @property
    def reason_summary(self) -> str:
        """The reason's first line, cut to 160 characters: a traceback's whole text is folded."""
        first = self.reason.strip().splitlines()[0] if self.reason.strip() else ""
        return first if len(first) <= 160 else first[:159] + "…"

    @property
    def reason_is_long(self) -> bool:
        return self.reason_summary != self.reason.strip()

    @classmethod
    def subject_field(cls, model: type[models.Model]) -> str:
        """"job" or "batch": the foreign key that points at a row of `model`."""
        return cls.SUBJECT_FIELDS[model._meta.label]


# Review models live in their own package but belong to this app (and its migrations).
# So do the evaluation job (classification/mlmodels/evaluation_model.py) and a batch's shards.
from classification.batches.shard_model import BatchShard  # noqa: E402, F401
from classification.mlmodels.evaluation_model import EvaluationJob  # noqa: E402, F401
from classification.review.models import ReviewItem, ReviewRound  # noqa: E402, F401
