"""Deleting a model: its row now, and once that commits every file it left, wherever it lives
(its artifact, its jobs' folders and synced checkpoints, its batches and evaluations, a search's
study).

Files go only after the commit, so a rolled-back delete keeps a model whose files are still
there; nothing outside MODEL_ARTIFACT_ROOT is ever removed, whatever a row says.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from classification import paths
from classification.batches import storage
from classification.jobs.adapt_encoders import ADAPT, ADAPTED
from classification.mlmodels import searches
from classification.mlmodels.evaluation_jobs import evaluation_folder
from classification.models import BatchJob, EvaluationJob, MLModel, TrainingJob
from core import filestore
from projects import policy
from projects.services import activity_record

logger = logging.getLogger(__name__)


def _inside_artifact_root(path: Path) -> bool:
    # A row's artifact_path is only trusted to name a folder MedLitBot wrote: nothing outside
    # MODEL_ARTIFACT_ROOT is ever removed, whatever the row says.
    root = Path(settings.MODEL_ARTIFACT_ROOT).resolve()
    resolved = path.resolve()
    return resolved != root and resolved.is_relative_to(root)


def folder_remove(path: Path) -> bool:
    """Remove a folder and all it holds; True when it existed and is gone."""
    if not path.exists():
        return False
    shutil.rmtree(path, ignore_errors=True)
    return not path.exists()


def artifact_tree_forget(*, digest: str) -> None:
    """Delete a published artifact tree once no model row names it (identical artifacts share
    one tree, so it may still be another model's)."""
    if digest and not MLModel.objects.filter(artifact_digest=digest).exists():
        filestore.tree_delete(digest=digest)


def mlmodel_delete(*, ml_model: MLModel, actor: Any = None) -> None:
    """Delete a model with its jobs and batches now, and their files once the deletion commits.

    Refused (ValueError, saying what to wait for) while it trains, classifies a batch, is
    evaluated, or is the adapted encoder a fine-tuning is reading: that work would read or
    write folders this removes. Files are removed only after the commit, so a rolled-back
    delete keeps a model whose artifact is still there (as dataset_delete does). RoleRequired
    unless `actor` may delete in the model's project (None: the system or an operator's shell).
    """
    if actor is not None:
        policy.require(user=actor, action=policy.Action.DELETE, obj=ml_model)
    if refusal := _work_in_progress(ml_model):
        raise ValueError(refusal)
    remove_files = _model_files_remover(ml_model)
    with transaction.atomic():
        activity_record(project=ml_model.project_id, actor=actor, verb="model_deleted",
                        summary=f"{actor.get_username() if actor is not None else 'The system'}"
                                f" deleted the model “{ml_model.name}” ({ml_model.model_type})",
                        model=ml_model.name, model_id=ml_model.pk)
        ml_model.delete()
        transaction.on_commit(remove_files)


def _work_in_progress(ml_model: MLModel) -> str | None:
    """Why the model cannot be deleted yet, or None: queued work counts, as a worker may claim
    it at any moment and then find its files gone."""
    if ml_model.training_jobs.filter(status__in=TrainingJob.ACTIVE_STATUSES).exists():
        return "Cancel the running training before deleting this model."
    if ml_model.batch_jobs.filter(status__in=BatchJob.ACTIVE_STATUSES).exists():
        return "Wait for its batches to finish (or cancel them) before deleting it."
    if ml_model.evaluation_jobs.filter(status__in=EvaluationJob.ACTIVE_STATUSES).exists():
        return "Wait for its evaluations to finish (or cancel them) before deleting it."
    if ml_model.model_type != ADAPT:
        return None
    # An adapted model's job names its encoder only in its settings (jobs/adapt_encoders.py),
    # and its child loads the encoder's folder when it starts or resumes.
    job = TrainingJob.objects.filter(
        status__in=TrainingJob.ACTIVE_STATUSES, ml_model__model_type=ADAPTED,
        config__encoder_model_id=ml_model.pk).select_related("ml_model").first()
    if job is not None:
        return (f"The model “{job.ml_model.name}” is being fine-tuned from this adapted "
                "encoder: wait for that training to finish (or cancel it) before deleting it.")
    return None


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
    # Evaluations go with the model too, and the sweep that purges their kept files walks the
    # rows: once these are gone it would never find them.
    evaluations = list(ml_model.evaluation_jobs.values_list("pk", "owner_id", "input_path"))
    folders += [evaluation_folder(owner_id=owner_id, job_id=job_id)
                for job_id, owner_id, _input in evaluations]
    shared_files += [input_path for *_ids, input_path in evaluations if input_path]
    checkpoints = [d for d in ml_model.training_jobs.values_list("synced_checkpoint_digest",
                                                                 flat=True) if d]
    artifact_digest, model_id = ml_model.artifact_digest, ml_model.pk

    def remove_files() -> None:
        for folder in folders:
            folder_remove(folder)
        for digest in checkpoints:
            filestore.tree_delete(digest=digest)
        artifact_tree_forget(digest=artifact_digest)  # runs after the row is gone
        for name in shared_files:
            filestore.file_delete(name=name)
        for study in studies:
            searches.search_study_delete(name=study)
        logger.info("model %s deleted with its files", model_id)

    return remove_files
