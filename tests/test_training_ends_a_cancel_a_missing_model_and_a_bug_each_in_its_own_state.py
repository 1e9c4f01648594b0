"""The training process's one error path maps each way a training can end early to its own end
state: a cancel ends the job cancelled (exit 0), a model that is not on this machine ends it
failed with the reason and the resume line (exit 0), and an ordinary bug ends it failed with a
short traceback (exit 1). Each runs the real process body (run_training) in this process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from classification.jobs import lifecycle
from classification.jobs.training import run_training
from classification.models import MLModel, TrainingJob


@pytest.fixture
def artifacts(settings: Any, tmp_path: Path) -> Path:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    return settings.MODEL_ARTIFACT_ROOT


def claimed_job(*, user: Any, dataset: Any, model_type: str,
                config: dict[str, Any] | None = None) -> TrainingJob:
    model = MLModel.objects.create(owner=user, name="Ends", model_type=model_type,
                                   dataset=dataset, parameters=config or {})
    job = TrainingJob.objects.create(ml_model=model, config=config or {}, total_epochs=1)
    assert lifecycle.training_job_claim(job=job)
    return job


def test_a_cancel_asked_before_the_fit_ends_the_job_cancelled(
    transactional_db: None, slice_dataset: Any, user: Any, artifacts: Path
) -> None:
    job = claimed_job(user=user, dataset=slice_dataset, model_type="tfidf_logreg")
    TrainingJob.objects.filter(pk=job.pk).update(cancel_requested=True)

    assert run_training(job_id=job.pk) == 0
    job.refresh_from_db()
    assert job.status == "cancelled", job.reason
    assert job.reason.startswith("Cancelled on request during "), job.reason
    assert job.ml_model.status != "trained"


def test_a_model_that_is_not_on_this_machine_ends_the_job_failed_with_a_resume_line(
    transactional_db: None, slice_dataset: Any, user: Any, artifacts: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "not-a-model"
    empty.mkdir()
    job = claimed_job(user=user, dataset=slice_dataset, model_type="custom",
                      config={"model_path": str(empty)})

    assert run_training(job_id=job.pk) == 0
    job.refresh_from_db()
    assert job.status == "failed", job.reason
    first, resume = job.reason.splitlines()[:2]
    assert first == (f"model_path {empty} holds no config.json: it must be a Hugging Face model "
                     "folder (save_pretrained output).")
    assert resume.startswith("Resume: ")
    assert "Traceback" not in job.reason


def test_a_bug_ends_the_job_failed_with_a_short_traceback_and_exit_code_1(
    transactional_db: None, slice_dataset: Any, user: Any, artifacts: Path, settings: Any
) -> None:
    # A real failure inside the process: the dataset's rows file is gone.
    (Path(settings.MEDIA_ROOT) / slice_dataset.rows_path).unlink()
    job = claimed_job(user=user, dataset=slice_dataset, model_type="tfidf_logreg")

    assert run_training(job_id=job.pk) == 1
    job.refresh_from_db()
    assert job.status == "failed", job.reason
    first, resume, *trace = job.reason.splitlines()
    assert first.startswith("Training failed with "), first
    assert resume.startswith("Resume: ")
    assert 0 < len(trace) <= 12
    assert "error: " in job.log_tail
    assert job.ml_model.status == "failed"
