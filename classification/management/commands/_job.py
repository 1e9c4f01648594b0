"""The shared shape of the commands that act on one training job by id."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from classification import selectors
from classification.models import TrainingJob


class JobCommand(BaseCommand):
    def add_arguments(self, parser) -> None:
        parser.add_argument("job_id", type=int)

    def job_get(self, job_id: int) -> TrainingJob:
        job = selectors.training_job_get(job_id=job_id)
        if job is None:
            raise CommandError(f"No training job {job_id}")
        return job
