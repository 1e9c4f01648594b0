"""Classification reads."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import FloatField, QuerySet
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from classification import paths
from classification.engine.artifacts import MANIFEST
from classification.models import MLModel, TrainingJob
from core import filestore
from dataset_management.models import Dataset
from projects import policy

logger = logging.getLogger(__name__)


def training_job_get(*, job_id: int) -> TrainingJob | None:
    return TrainingJob.objects.select_related("ml_model").filter(pk=job_id).first()


def training_job_latest_checkpoint(*, job: TrainingJob) -> str | None:
    return paths.latest_checkpoint(paths.job_output_dir(job.pk))


def mlmodel_list(*, user: Any, project: Any = None) -> QuerySet[MLModel]:
    """The models in the user's projects (only `project`'s, when given)."""
    return policy.scope(MLModel.objects.all(), user=user, project=project)


def mlmodel_trained_list(*, user: Any, project: Any = None) -> QuerySet[MLModel]:
    """The trained models a choice offers (classify, compare): what classifying reads."""
    return mlmodel_list(user=user, project=project).filter(status=MLModel.Status.TRAINED).only(
        "id", "name", "model_type", "label_names", "is_multilabel", "artifact_path",
        "artifact_digest", "status", "project_id",
    )


def mlmodel_list_rows(*, user: Any, project: Any = None) -> QuerySet[MLModel]:
    """The model list's rows: only the columns it shows.

    A model's `metrics` JSON (per-label tables, confusion matrices, confident mistakes with
    their abstracts) is tens of kilobytes; a list of 100 rows that loads it decodes megabytes
    to print two numbers, so the database reads the headline scores out of the JSON instead.
    """
    return (
        mlmodel_list(user=user, project=project)
        .select_related("dataset")
        .only("id", "name", "model_type", "status", "created_at", "dataset__id", "dataset__name")
        .annotate(
            micro_f1=Cast(KT("metrics__micro_f1"), FloatField()),
            macro_f1=Cast(KT("metrics__macro_f1"), FloatField()),
        )
    )


def training_dataset_choices(*, user: Any, project: Any = None) -> QuerySet[Dataset]:
    """The labelled datasets a person may train on: in the projects where their role may train
    (only `project`, when given). Unlabelled datasets are for prediction only."""
    from projects.models import Membership, Role

    roles = [role for role in Role.values if policy.allows(role, policy.Action.TRAIN)]
    mine = Membership.objects.filter(user_id=user.pk, role__in=roles).values("project_id")
    datasets = Dataset.objects.filter(project__in=mine).exclude(label_names=[])
    if project is not None:
        datasets = datasets.filter(project_id=getattr(project, "pk", project))
    return datasets


def mlmodel_get(*, model_id: int) -> MLModel | None:
    return MLModel.objects.select_related("dataset").filter(pk=model_id).first()


def training_job_queue_positions(*, queue: str | None = None) -> dict[int, int]:
    """Each queued job's place in the training queue (1 = next to start), oldest first.

    "Oldest" is when the job entered the queue: a queued row's `updated_at` is set by its
    creation or by the resume that re-queued it (nothing else writes a queued row), and the
    broker hands messages out in the order they were sent. So a job resumed today waits behind
    one created an hour ago, as it does in Redis. The queue is shared by every user, so the
    position counts other people's jobs too (without revealing anything else about them).
    `queue`: only the jobs waiting in that broker queue (the GPU queue has its own workers).
    """
    ids = (
        TrainingJob.objects.filter(status=TrainingJob.Status.QUEUED,
                                   **({"queue": queue} if queue else {}))
        .order_by("updated_at", "pk")
        .values_list("pk", flat=True)
    )
    return {pk: position for position, pk in enumerate(ids, start=1)}


def mlmodel_artifact_dir(*, ml_model: MLModel) -> Path | None:
    """The model's artifact folder on this node, or None when it has none.

    With shared storage the published tree is fetched once into this node's cache and read from
    there, whichever node trained it; otherwise a relative path is under MODEL_ARTIFACT_ROOT.
    """
    if not ml_model.artifact_path:
        return None
    if ml_model.artifact_digest and filestore.shared_enabled():
        try:
            return filestore.tree_local(digest=ml_model.artifact_digest)
        except OSError as exc:
            logger.warning("model %s: artifact %s unreadable: %s", ml_model.pk,
                           ml_model.artifact_digest[:12], exc)
            return None
    path = Path(ml_model.artifact_path)
    if not path.is_absolute():
        path = Path(settings.MODEL_ARTIFACT_ROOT) / path
    return path if path.is_dir() else None


def mlmodel_manifest(*, ml_model: MLModel) -> dict[str, Any]:
    """The artifact's manifest.json, or {} when the model has none or it cannot be read."""
    folder = mlmodel_artifact_dir(ml_model=ml_model)
    if folder is None:
        return {}
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0


def artifact_disk_usage() -> dict[str, int]:
    """Bytes on disk: trained models, job checkpoints (kept for resuming), and the number of
    job folders holding them; what the doctor reports so disk growth is never a surprise."""
    root = Path(settings.MODEL_ARTIFACT_ROOT)
    jobs = root / "jobs"
    job_folders = [f for f in jobs.iterdir() if f.is_dir()] if jobs.is_dir() else []
    checkpoints = sum(_folder_bytes(f) for f in job_folders)
    models = _folder_bytes(root) - checkpoints if root.is_dir() else 0
    return {"models": models, "checkpoints": checkpoints,
            "job_folders": sum(1 for f in job_folders if any(f.iterdir()))}


def mlmodel_inference_path(*, ml_model: MLModel) -> dict[str, Any] | None:
    """How batches run a trained transformer: the int8 fast path or the standard one, and why
    (the verdict recorded when it was trained); None for kinds that have one path only."""
    from classification.ml_models import get_spec

    if not ml_model.is_trained:
        return None
    summary = (ml_model.metrics or {}).get("fast_inference")
    if summary:
        return {**summary, "fast": bool(summary.get("used"))}
    try:
        kind = get_spec(ml_model.model_type).kind
    except ValueError:  # a kind this version no longer offers
        return None
    if kind != "transformer":
        return None
    return {"fast": False, "built": False, "reason": "this model was trained before MedLitBot "
            "had a fast path; train it again to build one"}
