"""Adapted encoders as a base to fine-tune: which ones a person may pick, and where one's
folder is on this node. Its own module so that the job lifecycle, the training child and the
adapt job can all ask it without importing one another."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from classification.engine.schema import TrainConfigError
from classification.models import MLModel
from projects import policy

ADAPT = "adapt"  # the adapt job's model type: its artifact is an encoder (engine/adapt.py)
ADAPTED = "adapted"  # a classifier fine-tuned from such an encoder


def adapted_encoder_choices(*, user: Any, project: Any = None) -> QuerySet[MLModel]:
    """The trained adapted encoders this person can see (in `project` only, when given)."""
    rows = MLModel.objects.filter(model_type=ADAPT, status=MLModel.Status.TRAINED)
    return policy.scope(rows, user=user, project=project).order_by("-trained_at")


def adapted_encoder_errors(*, owner: Any, model_type: str,
                           config: dict[str, Any]) -> dict[str, list[str]]:
    """{"encoder_model_id": [why]} when a fine-tuning names no usable encoder, else {}.

    The adapted type needs a trained adapt model the person may see; any other type must not
    name one (it would be silently ignored)."""
    if model_type == ADAPT:
        return {"model_type": ["An encoder is adapted by an adapt job (Adapt an encoder, or "
                               "jobs.adapt.adapt_job_create), which picks the texts it reads."]}
    encoder_id = int(config.get("encoder_model_id") or 0)
    if model_type != ADAPTED:
        if encoder_id:
            return {"encoder_model_id": ["Only the adapted type fine-tunes an adapted encoder."]}
        return {}
    if not encoder_id:
        return {"encoder_model_id": ["Pick the adapted encoder to fine-tune."]}
    encoder = MLModel.objects.filter(pk=encoder_id, model_type=ADAPT).first()
    if encoder is None or (owner is not None and not policy.can(
            user=owner, action=policy.Action.VIEW, obj=encoder)):
        return {"encoder_model_id": [f"No adapted encoder {encoder_id} that you can see."]}
    if encoder.status != MLModel.Status.TRAINED:
        return {"encoder_model_id": [f"Adapted encoder “{encoder.name}” has not finished "
                                     "adapting yet."]}
    return {}


def adapted_encoder_require(*, owner: Any, model_type: str, config: dict[str, Any]) -> None:
    """TrainConfigError naming encoder_model_id (or model_type) when adapted_encoder_errors
    finds a problem: what training_job_create asks at every door."""
    if errors := adapted_encoder_errors(owner=owner, model_type=model_type, config=config):
        raise TrainConfigError(errors)


def adapted_encoder_path(*, encoder_model_id: int) -> str:
    """The encoder's folder on this node; RuntimeError when its files are gone."""
    from classification.selectors import mlmodel_artifact_dir

    encoder = MLModel.objects.filter(pk=encoder_model_id, model_type=ADAPT).first()
    folder = mlmodel_artifact_dir(ml_model=encoder) if encoder is not None else None
    if folder is None or not (folder / "config.json").is_file():
        raise RuntimeError(f"The adapted encoder {encoder_model_id} this model fine-tunes is "
                           "gone (deleted, or its files are missing); adapt one again.")
    return str(folder)
