"""BatchShard: one row range of a large batch, run by whichever inference worker claims it.

Registered through an import at the end of classification/models.py, so it belongs to the
classification app (and its migrations); kept out of that module only for its length. What
runs a shard is classification/batches/shards.py.
"""

from __future__ import annotations

from django.db import models

from core.transitions import StatusQuerySet


class BatchShard(models.Model):
    """Articles `first_row`..`last_row` (1-based, as the result's `row` column counts them) of
    a BatchJob cut into `BatchJob.shard_count` shards.

    A row exists once the shard's input file is complete (input_path), so a worker never claims
    half a shard. Allowed transitions (each one conditional ``UPDATE ... WHERE id=? AND
    status=?``)::

        queued  -> running      a worker claimed it (`worker` names the process; attempts + 1)
        running -> completed    its two result files are whole (and published)
        running -> queued       it failed or its worker died: run again from its checkpoint,
                                while attempts < MAX_ATTEMPTS (shards.py)
        running -> failed       out of attempts: the batch fails with a reason naming it

    When the batch ends early (cancelled, failed) its shards' rows stay as they stood, for the
    record; only the batch's row says what happened, and every shard file is gone.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"

    TRANSITIONS: dict[str, frozenset[str]] = {
        Status.QUEUED: frozenset({Status.RUNNING}),
        Status.RUNNING: frozenset({Status.COMPLETED, Status.QUEUED, Status.FAILED}),
        Status.COMPLETED: frozenset(),
        Status.FAILED: frozenset(),
    }
    ACTIVE_STATUSES = (Status.QUEUED, Status.RUNNING)

    batch = models.ForeignKey("classification.BatchJob", on_delete=models.CASCADE,
                              related_name="shards")
    index = models.PositiveIntegerField()  # 0-based; shown 1-based ("shard 3 of 20")
    first_row = models.PositiveIntegerField()
    last_row = models.PositiveIntegerField()
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    # Relative to MEDIA_ROOT, published through core.filestore for workers on other nodes.
    input_path = models.CharField(max_length=500)
    attempts = models.PositiveIntegerField(default=0)
    # "host pid start-time" of the process running it: the reaper tells a dead worker from a
    # live one (and a reused PID from the original) by it. "" while queued.
    worker = models.CharField(max_length=300, blank=True)
    processed = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    reason = models.TextField(blank=True)  # why its last attempt stopped
    created_at = models.DateTimeField(auto_now_add=True)
    # Every progress write moves it: the reaper reads it as the shard's heartbeat.
    updated_at = models.DateTimeField(auto_now=True)

    # No StatusChange history: the batch's own history tells its story; `reason` holds the last
    # failure.
    objects = StatusQuerySet.as_manager()

    class Meta:
        ordering = ["batch", "index"]
        constraints = [
            models.UniqueConstraint(fields=["batch", "index"], name="batchshard_unique_index"),
        ]
        indexes = [models.Index(fields=["batch", "status"])]

    def __str__(self) -> str:
        return f"Shard {self.index + 1} of batch {self.batch_id} ({self.status})"

    @property
    def rows(self) -> int:
        return self.last_row - self.first_row + 1
