"""A training process killed by the kernel (what the OOM killer does: SIGKILL) ends the job
failed, naming the signal, with no orphan and nothing else touched."""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest

from tests.job_support import (
    DONE,
    assert_untouched,
    dataset_digest,
    start_faulty_job,
    wait_for,
    wait_for_job,
)


@pytest.mark.worker
def test_a_sigkilled_training_process_fails_the_job_with_the_signal_name(
    start_worker, slice_dataset, earlier_model, tiny_bert_dir: Path, user
) -> None:
    digest = dataset_digest(slice_dataset)
    job = start_faulty_job(start_worker, slice_dataset, tiny_bert_dir, user,
                           faults="crash_in_step", name="Crash")
    job = wait_for_job(job, DONE, 120)
    assert job.status == "failed", job.reason
    assert job.reason.startswith("Training process killed by SIGKILL (out of memory?)"), job.reason
    assert job.ml_model.status == "failed"
    assert job.finished_at is not None
    wait_for(lambda: not psutil.pid_exists(job.child_pid), 10, "the dead child to be reaped")
    assert_untouched(slice_dataset, digest, earlier_model)
