"""Disk hygiene: what a job leaves under MODEL_ARTIFACT_ROOT, and deleting a model's files.

A checkpoint holds the weights plus the optimizer state (about three times the model), and
Trainer keeps two per job. So a completed job keeps none (its artifact is the result), a job
that can be resumed keeps only the newest complete one (all a resume reads), and a deleted model
takes its artifact and every job folder with it.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from classification.batches import storage
from classification.jobs import checkpoint_sync, paths, searches
from classification.models import BatchJob, MLModel, TrainingJob
from core import filestore
from projects import policy
from projects.services import activity_record

logger = logging.getLogger(__name__)

S = TrainingJob.Status


def _inside_artifact_root(path: Path) -> bool:
    # A row's artifact_path is only trusted to name a folder MedLitBot wrote: nothing outside
    # MODEL_ARTIFACT_ROOT is ever removed, whatever the row says.
    root = Path(settings.MODEL_ARTIFACT_ROOT).resolve()
    resolved = path.resolve()
    return resolved != root and resolved.is_relative_to(root)


def _remove(path: Path) -> bool:
    if not path.exists():
        return False
    shutil.rmtree(path, ignore_errors=True)
    return not path.exists()


def artifact_tree_forget(*, digest: str) -> None:
    """Delete a published artifact tree once no model row names it (identical artifacts share
    one tree, so it may still be another model's)."""
    if digest and not MLModel.objects.filter(artifact_digest=digest).exists():
        filestore.tree_delete(digest=digest)


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
        return [str(folder)] if _remove(folder) else []
    newest = paths.latest_checkpoint(folder)
    removed = []
    for _step, checkpoint, _complete in paths.checkpoint_dirs(folder):
        if str(checkpoint) != newest and _remove(checkpoint):
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


def mlmodel_delete(*, ml_model: MLModel, actor: Any = None) -> None:
    """Delete a model with its jobs and batches now, and their files once the deletion commits.

    Refused (ValueError) while it trains or classifies a batch: that work would write into
    folders this removes. Files are removed only after the commit, so a rolled-back delete keeps
    a model whose artifact is still there (as dataset_delete does). RoleRequired unless `actor`
    may delete in the model's project (None: the system or an operator's shell).
    """
    if actor is not None:
        policy.require(user=actor, action=policy.Action.DELETE, obj=ml_model)
    if ml_model.training_jobs.filter(status__in=TrainingJob.ACTIVE_STATUSES).exists():
        raise ValueError("Cancel the running training before deleting this model.")
    if ml_model.batch_jobs.filter(status__in=BatchJob.ACTIVE_STATUSES).exists():
        raise ValueError("Wait for its batches to finish (or cancel them) before deleting it.")
    remove_files = _model_files_remover(ml_model)
    with transaction.atomic():
        activity_record(project=ml_model.project_id, actor=actor, verb="model_deleted",
                        summary=f"{actor.get_username() if actor is not None else 'The system'}"
                                f" deleted the model “{ml_model.name}” ({ml_model.model_type})",
                        model=ml_model.name, model_id=ml_model.pk)
        ml_model.delete()
        transaction.on_commit(remove_files)


def _model_files_remover(ml_model: MLModel) -> Callable[[], None]:
    """What removes the model's files, read now while its rows still say where they are."""
    job_ids = ml_model.training_jobs.values_list("pk", flat=True)
    folders = [paths.job_output_dir(pk) for pk in job_ids]
    studies = ([searches.search_study_name(job=job) for job in ml_model.training_jobs.all()]
               if ml_model.model_type == searches.SEARCH else [])
    folders.append(paths.model_artifact_dir(ml_model.pk))
    if ml_model.artifact_path:
        # A relative artifact_path is relative to the root, as the model pages read it.
        folders.append(Path(settings.MODEL_ARTIFACT_ROOT) / ml_model.artifact_path)
    folders = [f for f in folders if _inside_artifact_root(f)]
    # The batch rows go with the model (CASCADE); their folders would be left to no one.
    batches = list(ml_model.batch_jobs.values_list("pk", "owner_id", "input_path",
                                                   "result_path"))
    folders += [storage.batch_folder(owner_id=owner_id, batch_id=batch_id)
                for batch_id, owner_id, _input, _result in batches]
    shared_files = [name for *_ids, input_path, result_path in batches
                    for name in storage.published_names(input_path=input_path,
                                                        result_path=result_path)]
    checkpoints = [d for d in ml_model.training_jobs.values_list("synced_checkpoint_digest",
                                                                 flat=True) if d]
    artifact_digest, model_id = ml_model.artifact_digest, ml_model.pk

    def remove_files() -> None:
        for folder in folders:
            _remove(folder)
        for digest in checkpoints:
            filestore.tree_delete(digest=digest)
        artifact_tree_forget(digest=artifact_digest)  # runs after the row is gone
        for name in shared_files:
            filestore.file_delete(name=name)
        for study in studies:
            searches.search_study_delete(name=study)
        logger.info("model %s deleted with its files", model_id)

    return remove_files
