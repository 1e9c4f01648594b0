"""stop_training on a running job: it stops at the next step, saves a checkpoint, ends cancelled,
and resume then finishes it from that checkpoint."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from django.core.management import call_command

from classification import services
from tests.job_support import (
    DONE,
    assert_untouched,
    dataset_digest,
    fast_env,
    tiny_bert_config,
    wait_for,
    wait_for_job,
)


@pytest.mark.worker
def test_cancelling_a_running_job_stops_it_with_a_checkpoint_it_can_resume_from(
    start_worker, slice_dataset, earlier_model, tiny_bert_dir: Path, user
) -> None:
    digest = dataset_digest(slice_dataset)
    start_worker(**fast_env(MEDLITBOT_FAULT_INJECTION="slow_step=0.2"))
    job = services.training_job_create(
        owner=user, dataset=slice_dataset, model_type="custom", name="Cancelled",
        config=tiny_bert_config(tiny_bert_dir, epochs=1), staff=True,
    )

    def stepping() -> bool:
        job.refresh_from_db()
        return job.phase == "training" and job.current_step >= 3

    wait_for(stepping, 90, "training steps", poll=0.05)
    out = io.StringIO()
    asked = time.monotonic()
    call_command("stop_training", str(job.pk), stdout=out)
    assert "Cancel requested" in out.getvalue()
    job = wait_for_job(job, DONE, 30)
    assert time.monotonic() - asked < 10  # one step + the 1 s should_stop cache + a save
    assert job.status == "cancelled", (job.reason, job.log_tail)
    assert "checkpoint saved" in job.reason
    assert Path(job.checkpoint_path, "trainer_state.json").is_file()

    call_command("resume_training", str(job.pk), stdout=io.StringIO())
    job = wait_for_job(job, DONE, 90)
    assert job.status == "completed", (job.reason, job.log_tail)
    assert "attempt 2: resuming from checkpoint-" in job.log_tail
    assert_untouched(slice_dataset, digest, earlier_model)
