"""Classification reads."""

from __future__ import annotations

from django.db.models import QuerySet

from classification.jobs import paths
from classification.jobs.reaper import JobCheck, training_jobs_check
from classification.models import MLModel, TrainingJob


def training_job_get(*, job_id: int) -> TrainingJob | None:
    return TrainingJob.objects.select_related("ml_model").filter(pk=job_id).first()


def training_job_list_active() -> QuerySet[TrainingJob]:
    return TrainingJob.objects.active().select_related("ml_model")


def training_job_latest_checkpoint(*, job: TrainingJob) -> str | None:
    return paths.latest_checkpoint(paths.job_output_dir(job.pk))


def training_jobs_stuck(*, stale_seconds: float) -> list[JobCheck]:
    return [c for c in training_jobs_check(stale_seconds=stale_seconds) if c.problem]


def mlmodel_get(*, model_id: int) -> MLModel | None:
    return MLModel.objects.select_related("dataset").filter(pk=model_id).first()
