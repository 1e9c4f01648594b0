from django.db import models


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
