"""Helpers of the tests of rows without a label: the small multi-label fixture, and a TF-IDF
model trained on it by the training job's own code."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from classification.jobs import lifecycle
from classification.jobs.training import run_training
from classification.models import MLModel, TrainingJob

FIXTURE = Path(__file__).parent / "fixtures" / "multilabel_with_rows_without_labels.csv"
LABELS = ["cardiology", "neurology", "oncology"]


def model_trained(*, import_file: Callable[..., Any], user: Any, path: Path = FIXTURE,
                  name: str = "TF-IDF", **mapping: Any) -> MLModel:
    """A tfidf_logreg model trained, as a worker trains it, on `path` imported with `mapping`."""
    dataset = import_file(path, mapping=mapping or None)
    model = MLModel.objects.create(owner=user, name=name, model_type="tfidf_logreg",
                                   dataset=dataset)
    job = TrainingJob.objects.create(ml_model=model, config={}, total_epochs=1)
    assert lifecycle.training_job_claim(job=job)
    assert run_training(job_id=job.pk) == 0
    job.refresh_from_db()
    assert job.status == "completed", job.reason
    model.refresh_from_db()
    return model
