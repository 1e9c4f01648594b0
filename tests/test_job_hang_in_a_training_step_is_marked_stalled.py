"""A hang inside a training step (a native deadlock: the heartbeat thread keeps beating) is
caught by progress staleness and the job ends stalled, naming the step, within 2x the limit."""

from __future__ import annotations

import time
from pathlib import Path

import psutil
import pytest

from classification import services
from tests.job_support import (
    FAST,
    assert_untouched,
    dataset_digest,
    fast_env,
    tiny_bert_config,
    wait_for,
    wait_for_job,
)


@pytest.mark.worker
def test_a_hang_in_a_training_step_is_marked_stalled_while_heartbeats_continue(
    start_worker, slice_dataset, earlier_model, tiny_bert_dir: Path, user
) -> None:
    digest = dataset_digest(slice_dataset)
    start_worker(**fast_env(MEDLITBOT_FAULT_INJECTION="hang_in_step"))
    job = services.training_job_create(
        owner=user, dataset=slice_dataset, model_type="custom", name="Deadlock",
        config=tiny_bert_config(tiny_bert_dir),
    )

    def training() -> bool:
        job.refresh_from_db()
        return job.phase == "training" and job.current_step >= 1

    wait_for(training, 90, "the first training step", poll=0.05)
    hung_at, beat = time.monotonic(), job.heartbeat_at
    time.sleep(2)
    job.refresh_from_db()
    assert job.heartbeat_at > beat, "the heartbeat thread should keep beating through the hang"
    job = wait_for_job(job, {"completed", "failed", "stalled", "cancelled"}, 60)
    assert time.monotonic() - hung_at <= 2 * float(FAST["STALL_TIMEOUT_FLOOR"])
    assert job.status == "stalled", job.reason
    assert job.reason.startswith("Stalled in training (epoch"), job.reason
    assert "no progress for" in job.reason
    assert job.child_pid
    # The row is fenced first, then the child is terminated and killed: it is gone soon after.
    wait_for(lambda: not psutil.pid_exists(job.child_pid), 10, "the hung child to be killed")
    assert_untouched(slice_dataset, digest, earlier_model)
