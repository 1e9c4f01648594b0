"""Shared helpers for the job tests (no tests here): fast worker settings, waiting, datasets.

Import the fixtures into a test module with ``from tests.test_job_support import *``-style
explicit imports; pytest finds them by name there.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from classification.models import MLModel, TrainingJob

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# Short supervision timeouts so every fault is seen within seconds.
FAST = {
    "HEARTBEAT_INTERVAL": "0.5",
    "HEARTBEAT_TIMEOUT": "4",
    "STALL_TIMEOUT_FLOOR": "20",
    "STALL_TIMEOUT_CEILING": "30",
    "CANCEL_GRACE_SECONDS": "4",
    "PROGRESS_WRITE_INTERVAL": "0.3",
    "TOKENIZERS_PARALLELISM": "false",
    "OMP_NUM_THREADS": "1",
}


def fast_env(**extra: str) -> dict[str, str]:
    """FAST plus the folders this test's settings point at (import_file moves MEDIA_ROOT)."""
    return {
        **FAST,
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "MODEL_ARTIFACT_ROOT": str(settings.MODEL_ARTIFACT_ROOT),
        **extra,
    }


DONE = {"completed", "failed", "stalled", "cancelled"}


def wait_for(predicate: Callable[[], Any], timeout: float, what: str, poll: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def wait_for_job(job: TrainingJob, statuses: set[str], timeout: float) -> TrainingJob:
    def check() -> TrainingJob | None:
        job.refresh_from_db()
        return job if job.status in statuses else None

    try:
        return wait_for(check, timeout, f"job {job.pk} to become one of {statuses}")
    except AssertionError:
        job.refresh_from_db()
        raise AssertionError(
            f"job {job.pk} is {job.status}/{job.phase} ({job.reason!r})\n{job.log_tail}"
        ) from None


def tiny_bert_config(tiny_bert_dir: Path, **extra: Any) -> dict[str, Any]:
    return {
        "model_path": str(tiny_bert_dir),
        "epochs": 2,
        "batch_size": 8,
        "learning_rate": 1e-2,
        "max_length": 64,
        "early_stopping_patience": 0,
        **extra,
    }


def file_digest(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def dataset_digest(dataset: Any) -> str:
    return file_digest(Path(settings.MEDIA_ROOT) / dataset.rows_path)


@pytest.fixture
def slice_dataset(import_file: Callable[..., Any]) -> Any:
    """The 200-row demo slice, imported through the real ingestion service."""
    return import_file(FIXTURES / "demo_slice.csv", name="Slice")


@pytest.fixture
def earlier_model(slice_dataset: Any, tmp_path: Path) -> MLModel:
    """A model trained before the test's job; it must come out untouched."""
    artifact = tmp_path / "earlier-model"
    artifact.mkdir()
    (artifact / "manifest.json").write_text('{"model_type": "tfidf_logreg"}')
    return MLModel.objects.create(
        name="Earlier", model_type="tfidf_logreg", dataset=slice_dataset,
        status=MLModel.Status.TRAINED, artifact_path=str(artifact), metrics={"micro_f1": 0.5},
    )


def assert_untouched(dataset: Any, digest: str, earlier: MLModel) -> None:
    assert dataset_digest(dataset) == digest
    before = (earlier.status, earlier.artifact_path, earlier.metrics)
    earlier.refresh_from_db()
    assert (earlier.status, earlier.artifact_path, earlier.metrics) == before
    assert Path(earlier.artifact_path, "manifest.json").is_file()
