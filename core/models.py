from datetime import datetime

from django.conf import settings
from django.db import models
from django.utils import timezone


class WorkerPing(models.Model):
    """Proof that a Celery worker consumed a message and reached the database.

    Written by `core.tasks.worker_ping`; the doctor and start_m1.sh use it to tell "a worker is
    attached" from "a worker process exists".
    """

    token = models.CharField(max_length=64, unique=True)
    hostname = models.CharField(max_length=255)
    pid = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.hostname}:{self.pid} ({self.token})"


class WorkerHeartbeat(models.Model):
    """One row per Celery worker node, rewritten by the worker itself every few seconds.

    Written from a thread inside the worker (core.heartbeat), so a solo worker that is blocked
    for hours inside a training still proves it is alive, which `celery inspect` cannot: a busy
    solo pool answers no control messages. A row whose `last_seen` is older than
    WORKER_HEARTBEAT_TIMEOUT, or that says `stopped`, is a worker that is gone.
    """

    class State(models.TextChoices):
        IDLE = "idle", "Idle"
        BUSY = "busy", "Busy"
        STOPPING = "stopping", "Stopping"
        STOPPED = "stopped", "Stopped"

    # Celery's node name (e.g. "training@host"): what a restarted worker comes back as, so it
    # takes over its old row instead of leaving a stale one behind.
    hostname = models.CharField(max_length=255, unique=True)
    host = models.CharField(max_length=255)
    pid = models.PositiveIntegerField()
    queues = models.JSONField(default=list)
    pool = models.CharField(max_length=40)
    concurrency = models.PositiveIntegerField(default=1)
    state = models.CharField(max_length=10, choices=State.choices, default=State.IDLE)
    current_task = models.CharField(max_length=255, blank=True)
    current_task_id = models.CharField(max_length=255, blank=True)
    current_job = models.CharField(max_length=255, blank=True)
    busy_since = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField()
    last_seen = models.DateTimeField(db_index=True)
    # What the worker was started with that decides where its tasks run: {"devices": the
    # CUDA_VISIBLE_DEVICES of its process, None when unset}. The doctor shows it per GPU worker.
    facts = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["hostname"]

    def __str__(self) -> str:
        return f"{self.hostname} ({self.state})"

    def age_seconds(self, *, now: datetime | None = None) -> float:
        return max(0.0, ((now or timezone.now()) - self.last_seen).total_seconds())

    def is_live(self, *, now: datetime | None = None, timeout: float | None = None) -> bool:
        limit = settings.WORKER_HEARTBEAT_TIMEOUT if timeout is None else timeout
        return self.state != self.State.STOPPED and self.age_seconds(now=now) <= limit

    def serves(self, queue: str) -> bool:
        return queue in (self.queues or [])

    @property
    def devices(self) -> str | None:
        """CUDA_VISIBLE_DEVICES as the worker was started with it; None when it was unset."""
        return (self.facts or {}).get("devices")

    @property
    def activity(self) -> str:
        """What the worker is doing, in the words ping_worker and the dashboard print."""
        if self.state == self.State.BUSY:
            return f"busy: {self.current_job or self.current_task or 'a task'}"
        return self.get_state_display().lower()
