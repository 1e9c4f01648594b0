"""A job that keeps making progress but runs past JOB_HARD_TIME_LIMIT is ended failed, with a
reason naming the limit and where it was, and its training process is killed."""

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
def test_a_job_past_its_hard_time_limit_is_failed(
    start_worker, slice_dataset, earlier_model, tiny_bert_dir: Path, user
) -> None:
    digest = dataset_digest(slice_dataset)
    job = start_faulty_job(start_worker, slice_dataset, tiny_bert_dir, user,
                           faults="slow_step=0.5", name="Slow", epochs=5,
                           JOB_HARD_TIME_LIMIT="25")
    job = wait_for_job(job, DONE, 90)
    assert job.status == "failed", job.reason
    assert job.reason.startswith("Failed: hit the hard time limit of 25 s"), job.reason
    assert job.current_step > 0  # it was making progress: only the limit ended it
    wait_for(lambda: not psutil.pid_exists(job.child_pid), 10, "the child to be killed")
    assert_untouched(slice_dataset, digest, earlier_model)
