"""kill -9 of the worker mid-epoch: the child dies with it, cleanup_stuck_training marks the job
stalled, and after a worker restart, resume continues from the epoch-1 checkpoint to the end."""

from __future__ import annotations

import io
from pathlib import Path

import psutil
import pytest
from django.core.management import call_command

from classification import selectors, services
from classification.models import MLModel
from tests.job_support import (
    assert_untouched,
    dataset_digest,
    fast_env,
    tiny_bert_config,
    wait_for,
    wait_for_job,
)


@pytest.mark.worker
def test_a_killed_worker_leaves_no_orphan_and_the_job_resumes_from_its_checkpoint(
    start_worker, slice_dataset, earlier_model, tiny_bert_dir: Path, user
) -> None:
    digest = dataset_digest(slice_dataset)
    worker = start_worker(**fast_env(MEDLITBOT_FAULT_INJECTION="slow_step=0.3"))
    job = services.training_job_create(
        owner=user, dataset=slice_dataset, model_type="custom", name="Killed",
        config=tiny_bert_config(tiny_bert_dir, epochs=2), staff=True,
    )

    def in_second_epoch() -> bool:
        job.refresh_from_db()
        assert job.status in ("queued", "running"), (job.reason, job.log_tail)
        return job.current_epoch > 1.05 and selectors.training_job_latest_checkpoint(job=job)

    wait_for(in_second_epoch, 120, "the second epoch")
    child = job.child_pid
    worker.kill()  # SIGKILL: no cleanup code in the worker runs
    wait_for(lambda: not psutil.pid_exists(child) or
             psutil.Process(child).status() == psutil.STATUS_ZOMBIE, 5, "the child to die")

    out = io.StringIO()
    call_command("cleanup_stuck_training", stdout=out)
    job.refresh_from_db()
    assert job.status == "stalled", out.getvalue()
    assert f"worker process {worker.pid}" in job.reason
    assert "gone" in job.reason
    assert "marked stalled" in out.getvalue()
    again = io.StringIO()
    call_command("cleanup_stuck_training", stdout=again)  # idempotent, cron-safe
    assert "No running or waiting training jobs" in again.getvalue()

    start_worker(**fast_env())
    call_command("resume_training", str(job.pk), stdout=io.StringIO())
    job = wait_for_job(job, {"completed", "failed", "stalled", "cancelled"}, 300)
    assert job.status == "completed", (job.reason, job.log_tail)
    assert job.attempt == 2
    assert job.total_epochs == 2
    assert "attempt 2: resuming from checkpoint-" in job.log_tail
    assert MLModel.objects.get(pk=job.ml_model_id).status == "trained"
    assert_untouched(slice_dataset, digest, earlier_model)


