"""Disk hygiene for jobs: what a job leaves under MODEL_ARTIFACT_ROOT.

A checkpoint holds the weights plus the optimizer state (about three times the model), and
Trainer keeps two per job. So a completed job keeps none (its artifact is the result), and a
job that can be resumed keeps only the newest complete one (all a resume reads). Deleting a
model, with its artifact and every job folder: classification.mlmodels.deletion.
"""

from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings

from classification import paths
from classification.jobs import checkpoint_sync
from classification.mlmodels.deletion import folder_remove
from classification.models import TrainingJob

__all__ = ["training_job_dirs_sweep", "training_job_prune_checkpoints"]

logger = logging.getLogger(__name__)

S = TrainingJob.Status


def training_job_prune_checkpoints(*, job_id: int) -> list[str]:
    """Trim a finished job's folder to what it may still need; returns what was removed.

    Completed: the whole folder goes. Failed, stalled or cancelled: only the newest complete
    checkpoint stays (cut-off saves go too). Queued or running: nothing is touched, since a
    training may be writing there. Safe to run any number of times.
    """
    status = TrainingJob.objects.filter(pk=job_id).values_list("status", flat=True).first()
    if status == S.COMPLETED:
        checkpoint_sync.checkpoint_unpublish(job_id=job_id)
    folder = paths.job_output_dir(job_id)
    if not folder.is_dir() or status in TrainingJob.ACTIVE_STATUSES:
        return []
    if status is None or status == S.COMPLETED:
        # No row (its model was deleted) or a finished model: nothing here will be read again.
        return [str(folder)] if folder_remove(folder) else []
    newest = paths.latest_checkpoint(folder)
    removed = []
    for _step, checkpoint, _complete in paths.checkpoint_dirs(folder):
        if str(checkpoint) != newest and folder_remove(checkpoint):
            removed.append(str(checkpoint))
    if removed:
        logger.info("job %s: removed %d older or incomplete checkpoint(s), kept %s",
                    job_id, len(removed), newest)
    return removed


def training_job_dirs_sweep() -> list[str]:
    """Prune every job folder on disk; catches jobs ended while no supervisor ran (a dead
    worker, cleanup_stuck_training) and folders left by models deleted before this existed."""
    root = Path(settings.MODEL_ARTIFACT_ROOT) / "jobs"
    if not root.is_dir():
        return []
    removed: list[str] = []
    for folder in sorted(root.iterdir()):
        if folder.is_dir() and folder.name.startswith("job-") and folder.name[4:].isdigit():
            removed += training_job_prune_checkpoints(job_id=int(folder.name[4:]))
    return removed
