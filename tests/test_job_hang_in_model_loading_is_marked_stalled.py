"""A hang while loading the model (a download or file read that never returns) is caught by
the progress watchdog and the job ends stalled, naming the phase, within 2x the floor."""

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
)


@pytest.mark.worker
def test_a_hang_in_model_loading_is_marked_stalled_within_twice_the_floor(
    start_worker, slice_dataset, earlier_model, tiny_bert_dir: Path, user
) -> None:
    digest = dataset_digest(slice_dataset)
    job = start_faulty_job(start_worker, slice_dataset, tiny_bert_dir, user,
                           faults="hang_in_loading", name="Hangs")

    def loading() -> bool:
        job.refresh_from_db()
        return job.phase == "loading_model"

    wait_for(loading, 60, "the loading phase", poll=0.05)
    hung_at = time.monotonic()
    job = wait_for_job(job, DONE, 150)
    assert time.monotonic() - hung_at <= 2 * float(FAST["STALL_TIMEOUT_FLOOR"])
    assert job.status == "stalled", job.reason
    assert job.reason.startswith("Stalled in model loading: no progress for"), job.reason
    assert job.child_pid
    # The row is fenced first, then the child is terminated and killed: it is gone soon after.
    wait_for(lambda: not psutil.pid_exists(job.child_pid), 10, "the hung child to be killed")
    assert_untouched(slice_dataset, digest, earlier_model)
