"""manage.py stop_training JOB_ID: ask a job to stop (a queued job is cancelled at once)."""

from __future__ import annotations

from classification import services
from classification.management.commands._job import JobCommand


class Command(JobCommand):
    help = "Cancel a training job: queued jobs end now, running ones stop within one step."

    def handle(self, *args, job_id: int, **options) -> None:
        job = self.job_get(job_id)
        if not job.is_active:
            self.stdout.write(f"Job {job_id} is already {job.status}; nothing to stop.")
            return
        job = services.training_job_cancel(job=job)
        if job.status == "cancelled":
            self.stdout.write(f"Job {job_id} cancelled before it started.")
        else:
            self.stdout.write(
                f"Cancel requested for job {job_id}: it stops at its next step and saves a "
                "checkpoint (or is killed after CANCEL_GRACE_SECONDS)."
            )
