"""A second worker counts the shards while the leader is still writing the last one, and takes
the lead only after the leader has given it back and deleted the upload. It must see that the
cut is finished, not try to carry it on from an upload that is gone (which failed the batch
with FileNotFoundError on a loaded machine)."""

from __future__ import annotations

import pytest

from classification.batches import lifecycle, shards, storage
from classification.batches.runner import batch_job_run
from classification.models import BatchShard
from tests.batch_support import DEMO_SLICE, batch_files, create_batch, csv_rows

pytestmark = pytest.mark.django_db


def test_the_late_worker_runs_the_shards_instead_of_cutting_a_deleted_upload(
        settings, user, media_root, trained_model, monkeypatch) -> None:
    settings.BATCH_SHARD_ROWS = 50
    batch = create_batch(owner=user, ml_model=trained_model, path=DEMO_SLICE)
    # The leader's run up to the end of its cut: every shard written, lead given back,
    # upload deleted. Working on the shards is left to the late worker below.
    with monkeypatch.context() as patch:
        patch.setattr(shards, "batch_shards_work", lambda **kwargs: None)
        assert batch_job_run(batch_id=batch.pk.hex) is None
    batch.refresh_from_db()
    assert (batch.status, batch.shard_count, batch.leader) == ("running", 4, "")
    # Roll the clock back to the late worker's count: the last shard not there yet.
    last = BatchShard.objects.get(batch=batch, index=3)
    fields = {f.attname: getattr(last, f.attname) for f in BatchShard._meta.concrete_fields}
    last.delete()
    real_lead = lifecycle.batch_job_lead

    def leader_finishes_first(**kwargs) -> bool:
        if not BatchShard.objects.filter(batch=batch, index=3).exists():
            BatchShard.objects.create(**fields)
        return real_lead(**kwargs)

    monkeypatch.setattr(lifecycle, "batch_job_lead", leader_finishes_first)
    assert shards.batch_shards_work(batch_id=batch.pk) == "completed"
    batch.refresh_from_db()
    assert (batch.status, batch.processed, batch.reason) == ("completed", 200, "")
    folder = media_root / batch.result_path
    assert [r["row"] for r in csv_rows(folder.read_bytes())] == [str(i) for i in range(1, 201)]
    assert batch_files(batch) == {storage.RESULT_NAME, storage.RECORDS_NAME}
