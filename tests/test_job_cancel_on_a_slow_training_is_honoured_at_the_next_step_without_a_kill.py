"""A cancel on a slow training (slow steps, a slow disk) is honoured at the next step boundary:
one checkpoint is saved, the training process exits by itself, and the job ends cancelled within
one step plus that save, with a reason naming the checkpoint it kept."""

from __future__ import annotations

import io
import time
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from classification import paths, services
from tests.job_support import (
    DONE,
    fast_env,
    tiny_bert_config,
    wait_for,
    wait_for_job,
    wait_for_step,
)

STEP_SECONDS = 1.0
SAVE_SECONDS = 2.5  # with the step, more than the 4 s CANCEL_GRACE_SECONDS of the fast settings
# The stop check's 0.25 s, the row writes and this test's 0.1 s polling, on a busy machine.
OVERHEAD_SECONDS = 2.0


@pytest.mark.worker
def test_a_cancel_on_a_slow_training_ends_cancelled_within_one_step_and_one_save_without_a_kill(
    start_worker: Any, slice_dataset: Any, tiny_bert_dir: Path, user: Any, settings: Any,
    tmp_path: Path,
) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    worker = start_worker(**fast_env(
        MEDLITBOT_FAULT_INJECTION=f"slow_step={STEP_SECONDS},slow_save={SAVE_SECONDS}"
    ))
    job = services.training_job_create(
        owner=user, dataset=slice_dataset, model_type="custom", name="Slow",
        config=tiny_bert_config(tiny_bert_dir, epochs=2), staff=True,
    )
    wait_for_step(job, 3)
    asked = time.monotonic()
    call_command("stop_training", str(job.pk), stdout=io.StringIO())
    job = wait_for_job(job, DONE, 60)
    latency = time.monotonic() - asked
    print(f"cancel latency (request -> cancelled): {latency:.2f} s")

    assert job.status == "cancelled", (job.reason, job.log_tail)
    saves = [p for p in job.metrics_history if p.get("kind") == "checkpoint" and p.get("seconds")]
    assert len(saves) == 1, saves  # saved once: no second save, no evaluation after the stop
    save = saves[0]
    assert save["seconds"] >= SAVE_SECONDS
    assert latency <= STEP_SECONDS + save["seconds"] + OVERHEAD_SECONDS
    assert f"checkpoint saved: {save['path']}, resume continues from it" in job.reason
    assert "killed" not in job.reason
    assert Path(job.checkpoint_path).name == save["path"]
    assert Path(job.checkpoint_path) == Path(paths.latest_checkpoint(paths.job_output_dir(job.pk)))
    assert Path(job.checkpoint_path, "trainer_state.json").is_file()
    wait_for(lambda: f"job {job.pk}: training process exited with 0" in worker.log(), 15,
             "the training process to exit by itself")
