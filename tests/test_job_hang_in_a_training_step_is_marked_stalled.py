"""A hang inside a training step (a native deadlock: the heartbeat thread keeps beating) is
caught by progress staleness and the job ends stalled, naming the step, within 2x the limit."""

from __future__ import annotations

import time
from pathlib import Path

import psutil
import pytest

from tests.job_support import (
    DONE,
    FAST,
    assert_untouched,
    dataset_digest,
    start_faulty_job,
    wait_for,
    wait_for_job,
    wait_for_step,
)


@pytest.mark.worker
def test_a_hang_in_a_training_step_is_marked_stalled_while_heartbeats_continue(
    start_worker, slice_dataset, earlier_model, tiny_bert_dir: Path, user
) -> None:
    digest = dataset_digest(slice_dataset)
    job = start_faulty_job(start_worker, slice_dataset, tiny_bert_dir, user,
                           faults="hang_in_step", name="Deadlock")
    hung_at = wait_for_step(job)
    beat = job.heartbeat_at
    time.sleep(2)
    job.refresh_from_db()
    assert job.heartbeat_at > beat, "the heartbeat thread should keep beating through the hang"
    job = wait_for_job(job, DONE, 150)
    assert time.monotonic() - hung_at <= 2 * float(FAST["STALL_TIMEOUT_FLOOR"])
    assert job.status == "stalled", job.reason
    assert job.reason.startswith("Stalled in training (epoch"), job.reason
    assert "no progress for" in job.reason
    assert job.child_pid
    # The row is fenced first, then the child is terminated and killed: it is gone soon after.
    wait_for(lambda: not psutil.pid_exists(job.child_pid), 10, "the hung child to be killed")
    assert_untouched(slice_dataset, digest, earlier_model)
