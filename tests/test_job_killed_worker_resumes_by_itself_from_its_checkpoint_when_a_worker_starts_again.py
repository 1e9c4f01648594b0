"""kill -9 of the worker mid-epoch, then a worker starts again: it finds the job its dead
predecessor left, and, with TRAINING_AUTO_RESUMES allowing, queues it again by itself from the
epoch-1 checkpoint and trains it to the end; nobody presses Resume. The history keeps the stall
and the automatic resume, each with why."""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest

from classification import selectors, services
from classification.models import MLModel, StatusChange
from tests.job_support import fast_env, tiny_bert_config, wait_for, wait_for_job


@pytest.mark.worker
def test_the_next_worker_resumes_the_killed_workers_job_by_itself(
    start_worker, slice_dataset, tiny_bert_dir: Path, user
) -> None:
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

    start_worker(**fast_env(TRAINING_AUTO_RESUMES="2"))
    job = wait_for_job(job, {"completed", "failed", "cancelled"}, 300)
    assert job.status == "completed", (job.reason, job.log_tail)
    assert job.attempt == 2
    assert "attempt 2: resuming from checkpoint-" in job.log_tail
    assert MLModel.objects.get(pk=job.ml_model_id).status == "trained"
    history = list(StatusChange.objects.filter(job=job).values_list("source", "target", "reason",
                                                                    "actor"))
    stalled = [h for h in history if h[:2] == ("running", "stalled")]
    resumed = [h for h in history if h[:2] == ("stalled", "queued")]
    assert len(stalled) == 1
    assert f"worker process {worker.pid}" in stalled[0][2]
    assert len(resumed) == 1
    assert resumed[0][2].startswith("Resumed by itself (1 of 2) from its latest checkpoint")
    assert resumed[0][3] is None  # the system, not a person
