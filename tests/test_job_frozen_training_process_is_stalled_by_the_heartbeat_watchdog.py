"""A frozen training process (SIGSTOP: its heartbeat thread stops too) is caught by the
heartbeat watchdog within 2x HEARTBEAT_TIMEOUT, killed, and the job ends stalled."""

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
def test_a_frozen_training_process_is_stalled_for_missing_heartbeats(
    start_worker, slice_dataset, earlier_model, tiny_bert_dir: Path, user
) -> None:
    digest = dataset_digest(slice_dataset)
    job = start_faulty_job(start_worker, slice_dataset, tiny_bert_dir, user,
                           faults="freeze_in_step", name="Frozen")
    frozen_at = wait_for_step(job)
    job = wait_for_job(job, DONE, 150)
    assert time.monotonic() - frozen_at <= 2 * float(FAST["HEARTBEAT_TIMEOUT"])
    assert job.status == "stalled", job.reason
    assert job.reason.startswith("Stalled in training (epoch"), job.reason
    assert "no heartbeat for" in job.reason
    wait_for(lambda: not psutil.pid_exists(job.child_pid), 10, "the frozen child to be killed")
    assert_untouched(slice_dataset, digest, earlier_model)
