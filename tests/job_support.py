"""Helpers shared by the job tests: fast supervision settings, waiting, and digests.

The fixtures these tests use (``slice_dataset``, ``earlier_model``) live in tests/plugins/jobs.py.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings

from classification.models import MLModel, TrainingJob

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# Short supervision timeouts so every fault is seen within seconds, yet long enough that a
# healthy job on a 2-core machine shared by the parallel suite's other workers (int8 graph
# builds, worker starts) is never taken for a stalled one.
FAST = {
    "HEARTBEAT_INTERVAL": "0.5",
    "HEARTBEAT_TIMEOUT": "10",
    "STALL_TIMEOUT_FLOOR": "90",
    "STALL_TIMEOUT_CEILING": "120",
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
    """Settings for the tiny BERT; its model_path is a folder on the server, which
    services.training_job_create takes only with staff=True (or from a staff owner)."""
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


def assert_untouched(dataset: Any, digest: str, earlier: MLModel) -> None:
    assert dataset_digest(dataset) == digest
    before = (earlier.status, earlier.artifact_path, earlier.metrics)
    earlier.refresh_from_db()
    assert (earlier.status, earlier.artifact_path, earlier.metrics) == before
    assert Path(earlier.artifact_path, "manifest.json").is_file()


def start_faulty_job(
    start_worker: Callable[..., Any], dataset: Any, tiny_bert_dir: Path, user: Any, *,
    faults: str, name: str, epochs: int = 2, **env: str,
) -> TrainingJob:
    """Start a worker with `faults` injected and queue a tiny-BERT training on `dataset`."""
    from classification import services

    start_worker(**fast_env(MEDLITBOT_FAULT_INJECTION=faults, **env))
    return services.training_job_create(
        owner=user, dataset=dataset, model_type="custom", name=name,
        config=tiny_bert_config(tiny_bert_dir, epochs=epochs), staff=True,
    )


def wait_for_step(job: TrainingJob, step: int = 1, timeout: float = 240) -> float:
    """Wait until the job has reported training step `step`; returns the monotonic time then."""

    def stepping() -> bool:
        job.refresh_from_db()
        if job.current_step >= step and (job.phase == "training" or job.status in DONE):
            return True
        if job.status in DONE:  # it will never step: say why now, not after the timeout
            raise AssertionError(f"job ended {job.status} before step {step}: {job.reason}")
        return False

    wait_for(stepping, timeout, f"training step {step}", poll=0.05)
    return time.monotonic()
