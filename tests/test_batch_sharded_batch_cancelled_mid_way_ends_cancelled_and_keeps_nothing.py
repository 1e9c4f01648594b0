"""Cancelling a sharded batch stops it at the next progress write of whichever shard runs: the
batch ends `cancelled` with the articles its shards had done, and none of its files stay."""

from __future__ import annotations

import pytest

from classification.batches import shards
from classification.batches.runner import batch_job_run
from classification.batches.services import batch_job_cancel
from classification.models import BatchShard
from tests.batch_support import DEMO_SLICE, batch_files, create_batch

pytestmark = pytest.mark.django_db


def test_a_cancel_during_the_second_shard_ends_the_batch_and_removes_its_files(
        settings, user, media_root, trained_model, monkeypatch) -> None:
    settings.BATCH_SHARD_ROWS = 50
    real = shards._shard_classify

    def cancel_on_second(batch, shard, **kwargs):
        if shard.index == 1:
            batch_job_cancel(batch=batch, actor=user)
        return real(batch, shard, **kwargs)

    monkeypatch.setattr(shards, "_shard_classify", cancel_on_second)
    batch = create_batch(owner=user, ml_model=trained_model, path=DEMO_SLICE)
    assert batch_job_run(batch_id=batch.pk.hex) == "cancelled"
    batch.refresh_from_db()
    assert batch.status == "cancelled"
    assert batch.reason == "Cancelled after 50 of 200 articles."
    assert batch.processed == 50
    assert batch_files(batch) == set()
    assert list(BatchShard.objects.filter(batch=batch).order_by("index").values_list(
        "status", flat=True)) == ["completed", "running", "queued", "queued"]
