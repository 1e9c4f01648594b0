"""An inference worker killed with SIGKILL mid-batch never leaves the batch "running", nor asks
for the file again: the next worker's start (or the reaper) sends the batch again, and it
resumes after its last completed chunk. The result holds every article once, in file order."""

from __future__ import annotations

import json
import signal

import pytest

from classification.batches import checkpoint, storage
from classification.batches.services import batch_jobs_reap
from classification.models import BatchJob
from tests.batch_support import (
    DEMO_SLICE,
    batch_files,
    create_batch,
    csv_rows,
    input_rows,
    start_inference_worker,
    wait_for_batch,
)
from tests.job_support import wait_for

# Chunks of 20 articles, each one predict call slowed to 1 s: time to kill between two chunks.
SLOW = {"MEDLITBOT_FAULT_INJECTION": "slow_batch_chunk=1.0,batch_window=20",
        "PROGRESS_WRITE_INTERVAL": "0.1"}


def kill_mid_batch(start_worker, user, trained_model) -> tuple[BatchJob, int]:
    """The batch, killed after at least two chunks; the articles its checkpoint counts."""
    worker = start_inference_worker(start_worker, **SLOW)
    batch = create_batch(owner=user, ml_model=trained_model, path=DEMO_SLICE)

    def midway() -> bool:
        batch.refresh_from_db()
        return batch.status == "running" and batch.processed > 40

    wait_for(midway, 60, "the batch to be part-way through", poll=0.05)
    worker.kill(signal.SIGKILL)
    batch.refresh_from_db()
    assert batch.status == BatchJob.Status.RUNNING, "nobody has noticed yet"
    folder = storage.absolute(batch.input_path).parent
    point = checkpoint.checkpoint_read(folder=folder)
    assert point is not None
    assert point.rows >= 40, point
    assert point.rows % 20 == 0, "a checkpoint falls between two chunks"
    return batch, point.rows


def resumed_reason(batch: BatchJob, rows: int) -> str:
    change = batch.status_changes.get(source="running", target="queued")
    assert change.reason.startswith(
        "The inference worker stopped while classifying (killed or restarted) after "), change
    assert change.reason.endswith(
        f" of 200 articles; it resumes after article {rows}, its last completed chunk."), change
    return change.reason


def finish_and_check(batch: BatchJob, rows: int) -> None:
    """Run to the end, never counting below the checkpoint; every article once, in order."""
    lowest = []

    def completed() -> bool:
        batch.refresh_from_db()
        if batch.status == "running":
            lowest.append(batch.processed)
        return batch.status == "completed"

    wait_for(completed, 90, "the resumed batch to complete", poll=0.05)
    assert lowest, "it was seen running"
    assert min(lowest) >= rows, "it carried on from its checkpoint, not from zero"
    assert (batch.processed, batch.total) == (200, 200)
    assert batch_files(batch) == {storage.RESULT_NAME, storage.RECORDS_NAME}
    folder = storage.absolute(batch.result_path).parent
    result = (folder / storage.RESULT_NAME).read_bytes()
    assert result.count(b"\xef\xbb\xbf") == 1, "one BOM, at the start"
    written = csv_rows(result)
    assert [r["row"] for r in written] == [str(i) for i in range(1, 201)]
    assert [r["title"] for r in written] == [r["title"] for r in input_rows(DEMO_SLICE)]
    assert all(r["predicted_labels"] or r["note"] for r in written)
    records = (folder / storage.RECORDS_NAME).read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["row"] for line in records] == list(range(1, 201))


@pytest.mark.worker
def test_the_next_inference_worker_start_resumes_a_batch_its_killed_predecessor_left_running(
    start_worker, media_root, trained_model, user
) -> None:
    batch, rows = kill_mid_batch(start_worker, user, trained_model)
    start_inference_worker(start_worker, **SLOW)  # its start sends the batch again
    wait_for_batch(batch, {"running", "completed"}, timeout=30)
    resumed_reason(batch, rows)
    finish_and_check(batch, rows)


@pytest.mark.worker
def test_the_reaper_resumes_a_batch_whose_inference_worker_was_killed(
    start_worker, media_root, trained_model, user
) -> None:
    batch, rows = kill_mid_batch(start_worker, user, trained_model)
    assert batch_jobs_reap(stale_seconds=3600) == [batch.pk.hex]
    batch.refresh_from_db()
    assert batch.status == BatchJob.Status.QUEUED
    assert batch.reason == resumed_reason(batch, rows)
    assert batch.processed == rows, "the progress shown goes back to the checkpoint"
    assert batch_jobs_reap(stale_seconds=3600) == [], "a second run finds nothing to do"
    start_inference_worker(start_worker, **SLOW)
    finish_and_check(batch, rows)
