"""Which per-label thresholds a prediction may use: each label's F1-tuned one, or the one set for
the model's recall target on validation (engine/decisions.recall_thresholds). Batches, the
Classify page and `predict` ask here before anything is queued or classified, so that a model
saved before recall thresholds existed is refused up front, in the same words everywhere.

Read from the manifest (the engine's truth), not the stored metrics: a model trained with an
empty validation split has metrics but no recall thresholds.
"""

from __future__ import annotations

from classification.models import MLModel
from classification.selectors import mlmodel_manifest

THRESHOLD_F1, THRESHOLD_RECALL = "f1", "recall"
THRESHOLDS = (THRESHOLD_F1, THRESHOLD_RECALL)


def mlmodel_recall_target(*, ml_model: MLModel) -> float | None:
    """The recall the model's recall thresholds were set for on validation (e.g. 0.95), or None
    when it has none (saved before format 3, or trained without a validation split)."""
    manifest = mlmodel_manifest(ml_model=ml_model) if ml_model.is_trained else {}
    if not manifest.get("recall_thresholds"):
        return None
    return float(manifest.get("recall_target") or 0.95)


def mlmodel_threshold_check(*, ml_model: MLModel, threshold: str) -> None:
    """ValueError, saying what to do, unless the model can predict with `threshold`."""
    if threshold not in THRESHOLDS:
        raise ValueError(f"threshold is {THRESHOLD_F1} or {THRESHOLD_RECALL}, not {threshold!r}.")
    if threshold == THRESHOLD_RECALL and mlmodel_recall_target(ml_model=ml_model) is None:
        raise ValueError(f"“{ml_model.name}” has no recall thresholds (it was saved before they "
                         "existed, or trained without a validation split): retrain it to use "
                         "threshold=recall, or use threshold=f1.")
