"""The reaper looks at a running sharded batch shard by shard: a shard whose worker on this host
is dead (or whose worker on another host has written nothing for `stale_seconds`) goes back to
the queue, from its checkpoint; one that has used its attempts fails the batch with a reason
naming it. A live worker's shard is left alone, and the batch itself stays `running`."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from classification.batches import lifecycle, shards, storage
from classification.batches.services import batch_jobs_reap, batch_jobs_reconcile_on_worker_start
from classification.models import BatchJob, BatchShard
from core import processes
from tests.batch_support import DEMO_SLICE, batch_files, create_batch

pytestmark = pytest.mark.django_db

DEAD_PID = 2**22 + 7  # above Linux's largest PID: no process has it


def running_sharded_batch(user, model, *, worker: str, attempts: int) -> BatchJob:
    batch = create_batch(owner=user, ml_model=model, path=DEMO_SLICE)
    assert lifecycle.batch_job_claim(batch_id=batch.pk)
    BatchJob.objects.filter(pk=batch.pk).update(shard_count=2, total=200, processed=60)
    for index, (status, who) in enumerate([("running", worker), ("queued", "")]):
        BatchShard.objects.create(batch=batch, index=index, first_row=index * 100 + 1,
                                  last_row=index * 100 + 100, status=status, worker=who,
                                  attempts=attempts if who else 0, processed=60 if who else 0,
                                  input_path=f"{batch.input_path}.shard{index}")
    batch.refresh_from_db()
    return batch


def test_a_dead_workers_shard_is_queued_again_and_the_batch_keeps_running(
        user, media_root, trained_model) -> None:
    dead = f"{processes.hostname()} {DEAD_PID} 1700000000"
    batch = running_sharded_batch(user, trained_model, worker=dead, attempts=1)
    assert batch_jobs_reap(stale_seconds=3600) == [batch.pk.hex]
    shard = BatchShard.objects.get(batch=batch, index=0)
    assert (shard.status, shard.worker, shard.processed) == ("queued", "", 0)
    assert shard.reason == ("Its inference worker stopped (killed or restarted); it starts "
                            "again from its first article.")
    batch.refresh_from_db()
    assert batch.status == "running"
    assert batch.processed == 0, "the progress shown is the sum of the shards' own"
    assert batch_jobs_reap(stale_seconds=3600) == [], "a second run finds nothing to do"


def test_a_shard_out_of_attempts_fails_the_batch_naming_it(
        user, media_root, trained_model) -> None:
    dead = f"{processes.hostname()} {DEAD_PID} 1700000000"
    batch = running_sharded_batch(user, trained_model, worker=dead, attempts=shards.MAX_ATTEMPTS)
    assert batch_jobs_reconcile_on_worker_start() == [batch.pk.hex]
    batch.refresh_from_db()
    assert batch.status == "failed"
    assert batch.reason == (
        "The inference worker running the shard 1 of 2 (articles 1-100) stopped (killed or "
        "restarted) on each of its 3 attempts (see logs/celery_inference.log); upload the "
        "file again.")
    assert BatchShard.objects.get(batch=batch, index=0).status == "failed"
    assert batch_files(batch) == set()
    assert not storage.absolute(batch.input_path).exists()


def test_a_live_workers_shard_is_left_alone_and_a_silent_other_hosts_is_queued_again(
        user, media_root, trained_model) -> None:
    batch = running_sharded_batch(user, trained_model, worker=lifecycle.worker_token(),
                                  attempts=1)
    assert batch_jobs_reap(stale_seconds=60) == []
    assert BatchShard.objects.get(batch=batch, index=0).status == "running"

    other = running_sharded_batch(user, trained_model, worker="node-b 4242 1700000000",
                                  attempts=1)
    assert batch_jobs_reap(stale_seconds=60) == [], "node-b wrote progress just now"
    BatchShard.objects.filter(batch=other).update(
        updated_at=timezone.now() - timedelta(seconds=600))
    assert batch_jobs_reap(stale_seconds=60) == [other.pk.hex]
    shard = BatchShard.objects.get(batch=other, index=0)
    assert shard.status == "queued"
    assert shard.reason.startswith("Its inference worker stopped (no progress from node-b for ")
    assert batch_jobs_reconcile_on_worker_start() == [], "a start judges this host's only"
