"""manage.py resume_training JOB_ID: requeue a failed, stalled or cancelled job."""

from __future__ import annotations

from django.core.management.base import CommandError

from classification import services
from classification.management.commands._job import JobCommand
from core.queueing import QueueUnavailable


class Command(JobCommand):
    help = "Resume a failed, stalled or cancelled job from its last checkpoint (or from scratch)."

    def handle(self, *args, job_id: int, **options) -> None:
        job = self.job_get(job_id)
        try:
            job = services.training_job_resume(job=job)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        except QueueUnavailable as exc:
            message = f"{exc.message} Job {job_id} is failed again; resume it once it is back."
            raise CommandError(message) from exc
        where = job.checkpoint_path or "scratch (no checkpoint was saved)"
        self.stdout.write(
            f"Job {job_id} queued again (attempt {job.attempt}); continues from {where}"
        )
