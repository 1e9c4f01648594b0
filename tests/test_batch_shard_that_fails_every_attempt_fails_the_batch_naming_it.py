"""A shard that raises is run again on its own (from its checkpoint) up to MAX_ATTEMPTS times;
then the batch ends `failed` with a reason naming the shard and its articles, and keeps no
file: no shard input or result, no upload, no half-made CSV."""

from __future__ import annotations

import pytest

from classification.batches import shards
from classification.batches.runner import batch_job_run
from classification.models import BatchShard
from tests.batch_support import DEMO_SLICE, batch_files, create_batch

pytestmark = pytest.mark.django_db


def test_the_batch_fails_naming_the_shard_after_its_last_attempt(
        settings, user, media_root, trained_model) -> None:
    settings.BATCH_SHARD_ROWS = 50
    settings.MEDLITBOT_FAULT_INJECTION = "batch_shard_error=2"
    batch = create_batch(owner=user, ml_model=trained_model, path=DEMO_SLICE)
    assert batch_job_run(batch_id=batch.pk.hex) == "failed"
    batch.refresh_from_db()
    assert batch.status == "failed"
    assert batch.reason.startswith(
        "The shard 3 of 4 (articles 101-150) could not be classified after 3 attempts: "
        "Classification stopped with an error: RuntimeError: injected fault in shard 3"), \
        batch.reason
    broken = BatchShard.objects.get(batch=batch, index=2)
    assert (broken.status, broken.attempts) == ("failed", shards.MAX_ATTEMPTS)
    # The shards before it finished; the one after was never needed.
    assert list(BatchShard.objects.filter(batch=batch).order_by("index").values_list(
        "status", flat=True)) == ["completed", "completed", "failed", "queued"]
    assert batch.processed == 100, "the sum of the shards that ran"
    assert batch_files(batch) == set(), "nothing of the batch stays on disk"
    assert batch.leader == ""


def test_a_shard_that_fails_once_is_run_again_and_the_batch_completes(
        settings, user, media_root, trained_model, monkeypatch) -> None:
    settings.BATCH_SHARD_ROWS = 50
    calls: list[int] = []
    real = shards._shard_classify

    def flaky(batch, shard, **kwargs):
        calls.append(shard.index)
        if calls.count(1) == 1 and shard.index == 1:
            raise OSError("disk hiccup")
        return real(batch, shard, **kwargs)

    monkeypatch.setattr(shards, "_shard_classify", flaky)
    batch = create_batch(owner=user, ml_model=trained_model, path=DEMO_SLICE)
    assert batch_job_run(batch_id=batch.pk.hex) == "completed"
    batch.refresh_from_db()
    assert calls == [0, 1, 1, 2, 3]
    assert BatchShard.objects.get(batch=batch, index=1).attempts == 2
    assert (batch.processed, batch.total) == (200, 200)
