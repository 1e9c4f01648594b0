"""Helpers for the threshold tests: a model saved before recall thresholds existed, a batch run
in-process with a chosen threshold, and what the engine itself decides for the same articles."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from django.core.files import File

from classification import ml_models
from classification.batches import services, storage
from classification.batches.runner import batch_job_run
from classification.mlmodels.prediction import mlmodel_article_texts
from classification.models import BatchJob, MLModel
from dataset_management.articles import articles_read


def format_2_model(*, user: Any, rows: Any, tfidf_artifact: dict[str, Any],
                   folder: Path) -> MLModel:
    """The fixture's TF-IDF model as MedLitBot saved it before calibration and recall
    thresholds existed (artifact format 2)."""
    folder = Path(shutil.copytree(tfidf_artifact["path"], folder))
    manifest = json.loads((folder / "manifest.json").read_text())
    for key in ("calibration", "recall_target", "recall_thresholds"):
        manifest.pop(key)
    (folder / "manifest.json").write_text(json.dumps({**manifest, "format_version": 2}))
    return rows.model(user, rows.dataset(user, label_names=tfidf_artifact["labels"]),
                      name="Old TF-IDF", artifact_path=str(folder),
                      label_names=tfidf_artifact["labels"])


def batch_create(*, owner: Any, ml_model: MLModel, path: Path, threshold: str) -> BatchJob:
    with path.open("rb") as handle:
        return services.batch_job_create(owner=owner, ml_model=ml_model, threshold=threshold,
                                         uploaded_file=File(handle, name=path.name))


def batch_run(*, owner: Any, ml_model: MLModel, path: Path,
              threshold: str) -> tuple[BatchJob, bytes, list[dict[str, Any]]]:
    """Create and run a batch in this process: (its row, its CSV, its JSON Lines items)."""
    batch = batch_create(owner=owner, ml_model=ml_model, path=path, threshold=threshold)
    assert batch_job_run(batch_id=batch.pk.hex) == "completed"
    batch.refresh_from_db()
    folder = storage.absolute(batch.result_path).parent
    records = (folder / storage.RECORDS_NAME).read_text(encoding="utf-8").splitlines()
    return batch, (folder / storage.RESULT_NAME).read_bytes(), [json.loads(r) for r in records]


def engine_labels(*, ml_model: MLModel, path: Path, threshold: str) -> list[list[str] | None]:
    """Per article of the file, the labels a freshly loaded copy of the model's engine gives
    under `threshold` (None for an article without text)."""
    with articles_read(path=path, filename=path.name, overrides={"unlabelled": True}) as stream:
        articles = list(stream)
    texts = mlmodel_article_texts(ml_model=ml_model, articles=[a for a in articles
                                                               if not a.problem])
    engine = ml_models.load_classifier(ml_model.artifact_path)
    predictions = iter(engine.predict(texts, threshold=threshold))
    return [None if a.problem else next(predictions)["labels"] for a in articles]
