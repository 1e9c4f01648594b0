"""A batch cut into shards runs on every live inference worker at once, and its result holds
every article once, in file order. When one of two workers is killed (SIGKILL) mid-shard, only
that shard's work since its last checkpoint is lost: the reaper queues the shard again and the
other worker carries it on from its checkpoint, so the batch still completes."""

from __future__ import annotations

import json
import signal

import pytest

from classification.batches import storage
from classification.batches.services import batch_jobs_reap
from classification.models import BatchJob, BatchShard
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

# Four shards of 50; chunks of 10 articles, each slowed to 0.4 s: time to watch and to kill.
SLOW = {"MEDLITBOT_FAULT_INJECTION": "slow_batch_chunk=0.4,batch_window=10",
        "PROGRESS_WRITE_INTERVAL": "0.1", "BATCH_SHARD_ROWS": "50"}


def shard_pids(batch: BatchJob) -> set[int]:
    tokens = BatchShard.objects.filter(batch=batch).values_list("worker", flat=True)
    return {int(token.split(" ")[-2]) for token in tokens if token}


def check_complete_and_ordered(batch: BatchJob) -> None:
    assert batch.status == "completed", batch.reason
    assert batch.shard_count == 4
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
def test_two_inference_workers_share_the_shards_and_the_result_is_whole_and_in_order(
        start_worker, media_root, trained_model, user) -> None:
    workers = [start_inference_worker(start_worker, **SLOW) for _ in range(2)]
    batch = create_batch(owner=user, ml_model=trained_model, path=DEMO_SLICE)
    wait_for_batch(batch, timeout=120)
    check_complete_and_ordered(batch)
    assert shard_pids(batch) == {w.pid for w in workers}, "both workers ran shards"


@pytest.mark.worker
def test_a_worker_killed_mid_shard_loses_only_that_shards_progress_and_the_batch_completes(
        start_worker, media_root, trained_model, user) -> None:
    workers = {w.pid: w for w in (start_inference_worker(start_worker, **SLOW)
                                  for _ in range(2))}
    batch = create_batch(owner=user, ml_model=trained_model, path=DEMO_SLICE)

    def both_mid_shard() -> BatchShard | None:
        running = list(BatchShard.objects.filter(batch=batch, status="running"))
        if len({s.worker for s in running}) == 2:
            return next((s for s in running if s.processed >= 20), None)
        return None

    victim = wait_for(both_mid_shard, 60, "both workers to be part-way through a shard",
                      poll=0.05)
    killed = int(victim.worker.split(" ")[-2])
    workers[killed].kill(signal.SIGKILL)
    assert batch_jobs_reap(stale_seconds=3600) == [batch.pk.hex]
    victim.refresh_from_db()
    assert victim.reason.startswith(
        "Its inference worker stopped (killed or restarted); it carries on after its article "
    ), victim.reason
    wait_for_batch(batch, timeout=120)
    check_complete_and_ordered(batch)
    victim.refresh_from_db()
    assert victim.attempts == 2
    survivor = next(pid for pid in workers if pid != killed)
    assert int(victim.worker.split(" ")[-2]) == survivor, "the shard ran again elsewhere"
