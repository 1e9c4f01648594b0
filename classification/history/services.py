"""The history's first row: the state a training job or a batch was created in.

Connected to post_save (classification/apps.py) rather than called from each service, because
jobs and batches are created in several places (training, the seed's delivery, searches,
ensembles, review retrains, batches from a file or from records, the benchmarks and tests),
and a row created in any of them must start its history.
"""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_save
from django.dispatch import receiver

from classification.models import BatchJob, MLModel, StatusChange, TrainingJob


def status_change_record_creation(*, row: TrainingJob | BatchJob, actor_id: int | None) -> None:
    """The row "" -> its status at its creation, by the user who created it."""
    StatusChange.objects.create(
        **{StatusChange.subject_field(type(row)): row},
        source="", target=row.status, reason=row.reason or "", at=row.created_at,
        actor_id=actor_id,
    )


def _job_creator_id(job: TrainingJob) -> int | None:
    # The model is nearly always cached (created together); otherwise one small read.
    if TrainingJob.ml_model.is_cached(job):
        return job.ml_model.owner_id
    return MLModel.objects.filter(pk=job.ml_model_id).values_list("owner_id", flat=True).first()


@receiver(post_save, sender=TrainingJob, dispatch_uid="status_change_job_created")
def _job_created(sender: Any, instance: TrainingJob, created: bool, raw: bool,
                 **kwargs: Any) -> None:
    # raw: a fixture being loaded brings its own history rows.
    if created and not raw:
        status_change_record_creation(row=instance, actor_id=_job_creator_id(instance))


@receiver(post_save, sender=BatchJob, dispatch_uid="status_change_batch_created")
def _batch_created(sender: Any, instance: BatchJob, created: bool, raw: bool,
                   **kwargs: Any) -> None:
    if created and not raw:
        status_change_record_creation(row=instance, actor_id=instance.owner_id)
