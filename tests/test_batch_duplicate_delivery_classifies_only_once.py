"""queued -> running happens once per batch: a second delivery of its message does nothing and
leaves the first delivery's CSV as it was; no transition out of an end state is allowed."""

from __future__ import annotations

import os

import pytest

from classification.batches.services import batch_job_run
from classification.models import BatchJob
from core.processes import hostname
from tests.batch_support import DEMO_SLICE, batch_files, create_batch

pytestmark = pytest.mark.django_db


def test_a_second_delivery_of_a_batch_does_nothing(media_root, trained_model, user) -> None:
    # Inside the test transaction on_commit never fires, so nothing reaches the broker.
    batch = create_batch(owner=user, ml_model=trained_model, path=DEMO_SLICE)
    assert batch_job_run(batch_id=batch.pk.hex) == "completed"
    batch.refresh_from_db()
    result = media_root / batch.result_path
    first = (result.read_bytes(), result.stat().st_mtime_ns, batch.finished_at)

    assert batch_job_run(batch_id=batch.pk.hex) is None
    batch.refresh_from_db()
    assert batch.status == "completed"
    assert (result.read_bytes(), result.stat().st_mtime_ns, batch.finished_at) == first
    assert (batch.worker_host, batch.worker_pid) == (hostname(), os.getpid())
    assert batch_files(batch) == {"result.csv", "result.jsonl"}


def test_an_ended_batch_cannot_be_moved_again(media_root, trained_model, user) -> None:
    batch = create_batch(owner=user, ml_model=trained_model, path=DEMO_SLICE)
    assert BatchJob.objects.transition(batch.pk, source="queued", target="cancelled")
    assert not BatchJob.objects.transition(batch.pk, source="queued", target="running")
    for end in ("completed", "failed", "cancelled"):
        with pytest.raises(ValueError, match="Illegal BatchJob transition"):
            BatchJob.objects.transition(batch.pk, source=end, target="running")
