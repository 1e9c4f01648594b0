"""A running sharded batch whose workers died: its shards go back to the queue, or the batch
fails naming the shard that stopped its worker every time (classification/batches/shards.py).

Called for each running sharded batch by the reaper (services.batch_jobs_reap) and by a
starting inference worker (services.batch_jobs_reconcile_on_worker_start), instead of the
one-piece batch's resume: the batch itself stays `running`, only its shards move.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from classification.batches import checkpoint, lifecycle, shards
from classification.models import BatchJob, BatchShard

H = BatchShard.Status
S = BatchJob.Status


def batch_shards_reap(*, batch: BatchJob, stale_seconds: float | None) -> str | None:
    """The reaper's and a starting worker's look at a running sharded batch: shards whose
    worker is gone go back to the queue (or, out of attempts, fail the batch), a dead leader's
    lead is released, and a worker is woken if work waits. "resumed", "failed" or None.

    Gone: on this host, its process is dead (or its PID now another's); on another host, which
    this one cannot inspect, no progress write for `stale_seconds` (None: this host only).
    """
    now, outcome = timezone.now(), None

    def gone(token: str, since: Any) -> str:
        alive = lifecycle.worker_token_alive(token)
        if alive is False:
            return "killed or restarted"
        age = (now - since).total_seconds()
        if alive is None and stale_seconds is not None and age > stale_seconds:
            return f"no progress from {token.split(' ')[0]} for {age:.0f} s"
        return ""

    for shard in batch.shards.filter(status=H.RUNNING).order_by("index"):
        if why := gone(shard.worker, shard.updated_at):
            outcome = shard_requeue(batch=batch, shard=shard, why=why) or outcome
            if outcome == "failed":
                return outcome
    if batch.leader and gone(batch.leader, batch.updated_at) and lifecycle.batch_job_unlead(
            batch_id=batch.pk, token=batch.leader):
        outcome = "resumed"
    idle = (stale_seconds is not None
            and (now - batch.updated_at).total_seconds() > stale_seconds)
    if outcome or idle:
        # A wake-up only: the work left is picked from the rows, never named by the message.
        shards.wake_send(batch.pk)
    return outcome


def shard_requeue(*, batch: BatchJob, shard: BatchShard, why: str) -> str | None:
    """A shard whose worker is gone (the reaper): queued again from its checkpoint, or, out of
    attempts, failed with its batch. "resumed", "failed", or None when it moved meanwhile."""
    mine = BatchShard.objects.filter(worker=shard.worker)
    if shard.attempts >= shards.MAX_ATTEMPTS:
        if not mine.transition(shard.pk, source=H.RUNNING, target=H.FAILED, reason=why):
            return None
        shards.batch_end(batch, target=S.FAILED, reason=(
            f"The inference worker running the {shards.shard_name(batch, shard)} stopped "
            f"({why}) on each of its {shard.attempts} attempts (see "
            "logs/celery_inference.log); upload the file again."))
        return "failed"
    point = checkpoint.checkpoint_read(folder=shards.shard_folder(batch, shard.index))
    where = (f"it carries on after its article {point.rows}" if point
             else "it starts again from its first article")
    if not mine.transition(shard.pk, source=H.RUNNING, target=H.QUEUED, worker="",
                           processed=point.processed if point else 0,
                           skipped=point.skipped if point else 0,
                           reason=f"Its inference worker stopped ({why}); {where}."):
        return None
    shards.sums_write(batch.pk)
    return "resumed"
