"""An inference worker killed with SIGKILL mid-batch never leaves the batch "running": the reaper
(or the next worker's start) fails it with a plain reason and removes its input."""

from __future__ import annotations

import signal

import pytest

from classification.batches.services import batch_jobs_reap
from classification.models import BatchJob
from tests.batch_support import (
    DEMO_SLICE,
    batch_files,
    create_batch,
    start_inference_worker,
    wait_for_batch,
)
from tests.job_support import wait_for

SLOW = {"MEDLITBOT_FAULT_INJECTION": "slow_batch_chunk=1.0", "PROGRESS_WRITE_INTERVAL": "0.1"}


def kill_mid_batch(start_worker, user, trained_model) -> BatchJob:
    worker = start_inference_worker(start_worker, **SLOW)
    batch = create_batch(owner=user, ml_model=trained_model, path=DEMO_SLICE)

    def midway() -> bool:
        batch.refresh_from_db()
        return batch.status == "running" and batch.processed > 0

    wait_for(midway, 60, "the batch to be part-way through", poll=0.05)
    worker.kill(signal.SIGKILL)
    batch.refresh_from_db()
    assert batch.status == BatchJob.Status.RUNNING, "nobody has noticed yet"
    return batch


def assert_failed_with_a_reason(batch: BatchJob) -> None:
    batch.refresh_from_db()
    assert batch.status == BatchJob.Status.FAILED
    assert batch.reason == (
        "The inference worker stopped while classifying (killed or restarted) after "
        f"{batch.processed} of 200 articles; upload the file again."
    )
    assert 0 < batch.processed < 200
    assert batch.finished_at is not None
    assert batch_files(batch) == set(), "neither the input nor a half result is kept"


@pytest.mark.worker
def test_the_reaper_fails_a_batch_whose_inference_worker_was_killed(
    start_worker, media_root, trained_model, user
) -> None:
    batch = kill_mid_batch(start_worker, user, trained_model)
    assert batch_jobs_reap(stale_seconds=3600) == [batch.pk.hex]
    assert_failed_with_a_reason(batch)
    assert batch_jobs_reap(stale_seconds=3600) == [], "a second run finds nothing to do"


@pytest.mark.worker
def test_the_next_inference_worker_start_fails_a_batch_its_killed_predecessor_left_running(
    start_worker, media_root, trained_model, user
) -> None:
    batch = kill_mid_batch(start_worker, user, trained_model)
    start_inference_worker(start_worker)  # returns once the worker says "ready"
    assert_failed_with_a_reason(wait_for_batch(batch, {"failed"}, timeout=10))
