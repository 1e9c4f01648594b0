"""Once a job completes, its intermediate checkpoints under MODEL_ARTIFACT_ROOT/jobs/job-N are
gone; the final artifact stays and still loads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from classification import ml_models, paths, services
from tests.job_support import DONE, fast_env, tiny_bert_config, wait_for, wait_for_job


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


@pytest.mark.worker
def test_a_completed_job_leaves_its_artifact_and_no_intermediate_checkpoints(
    start_worker: Any, slice_dataset: Any, tiny_bert_dir: Path, user: Any, settings: Any,
    tmp_path: Path,
) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    start_worker(**fast_env())
    job = services.training_job_create(
        owner=user, dataset=slice_dataset, model_type="custom", name="Tidy",
        config=tiny_bert_config(tiny_bert_dir, epochs=2), staff=True,
    )
    folder = paths.job_output_dir(job.pk)
    seen: dict[str, int] = {}

    def checkpoints_while_training() -> bool:
        # Trainer keeps two checkpoints while it runs: the disk a completed job used to leave.
        for checkpoint in folder.glob("checkpoint-*"):
            if (checkpoint / "trainer_state.json").is_file():
                seen[checkpoint.name] = folder_bytes(checkpoint)
        job.refresh_from_db()
        return job.status in DONE

    wait_for(checkpoints_while_training, 120, "the job to end", poll=0.05)
    job = wait_for_job(job, DONE, 5)
    assert job.status == "completed", (job.reason, job.log_tail)
    assert len(seen) == 2, seen  # one per epoch: there was something to remove

    wait_for(lambda: not folder.exists(), 10, "the job folder to be removed")
    print(f"checkpoints kept while training: {seen} bytes; left after completion: none")
    artifact = Path(job.ml_model.artifact_path)
    assert (artifact / "manifest.json").is_file()
    assert ml_models.load_classifier(str(artifact)).predict(["Myocardial infarction"])
    assert not list(Path(settings.MODEL_ARTIFACT_ROOT).rglob("checkpoint-*"))
