"""The reaper and the worker-start reconciliation act only on batches whose worker is really
gone: a dead worker's batch on this host is sent again to resume (failed once it has been
resumed three times, or when its input is gone), a live worker on this host keeps its batch,
another host's batch is failed only after `stale_seconds` without progress; batches older than
a week are removed, rows and files."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import psutil
import pytest
from django.utils import timezone

from classification.batches import storage
from classification.batches.services import (
    batch_jobs_reap,
    batch_jobs_reconcile_on_worker_start,
)
from classification.models import BatchJob
from core.processes import hostname
from tests.batch_support import DEMO_SLICE, batch_files, create_batch

pytestmark = pytest.mark.django_db


def dead_pid() -> int:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    return gone.pid


def running(batch: BatchJob, *, host: str, pid: int, seconds_ago: float = 0) -> BatchJob:
    stamp = timezone.now() - timedelta(seconds=seconds_ago)
    BatchJob.objects.filter(pk=batch.pk).update(
        status="running", worker_host=host, worker_pid=pid, started_at=stamp, updated_at=stamp,
        total=200, processed=64,
    )
    return batch


def media_path(batch: BatchJob) -> Path:
    return storage.batch_folder(owner_id=batch.owner_id, batch_id=batch.pk)


@pytest.fixture
def make(media_root, trained_model, user):
    return lambda: create_batch(owner=user, ml_model=trained_model, path=DEMO_SLICE)


def test_worker_start_resumes_only_this_hosts_batches_whose_worker_is_dead(make) -> None:
    live = running(make(), host=hostname(), pid=os.getpid(), seconds_ago=1)
    dead = running(make(), host=hostname(), pid=dead_pid())
    # Our PID, but the batch started an hour before this process existed: the PID was reused.
    before_us = time.time() - psutil.Process().create_time() + 3600
    reused = running(make(), host=hostname(), pid=os.getpid(), seconds_ago=before_us)
    elsewhere = running(make(), host="other-host.example", pid=dead_pid(), seconds_ago=7200)

    assert sorted(batch_jobs_reconcile_on_worker_start()) == sorted([dead.pk.hex, reused.pk.hex])
    statuses = dict(BatchJob.objects.values_list("pk", "status"))
    assert statuses[live.pk] == statuses[elsewhere.pk] == "running"
    assert statuses[dead.pk] == statuses[reused.pk] == "queued"
    dead.refresh_from_db()
    assert dead.reason == (
        "The inference worker stopped while classifying (killed or restarted) after 64 of 200 "
        "articles; it starts again from the first article (no chunk was complete).")
    assert batch_files(dead) == {"input.csv"}, "kept for the resumed run"
    assert batch_files(live), "a live worker's input is left alone"
    # Created long ago but queued again just now: its new message is not taken for lost.
    BatchJob.objects.filter(pk=dead.pk).update(created_at=timezone.now() - timedelta(hours=2))
    assert dead.pk.hex not in batch_jobs_reap(stale_seconds=300)
    assert BatchJob.objects.get(pk=dead.pk).status == "queued"


def test_a_batch_resumed_three_times_or_without_its_input_is_failed(make) -> None:
    again, gone = make(), make()
    for _ in range(3):
        running(again, host=hostname(), pid=dead_pid())
        assert batch_jobs_reap(stale_seconds=300) == [again.pk.hex]
        assert BatchJob.objects.get(pk=again.pk).status == "queued"
    running(again, host=hostname(), pid=dead_pid())
    running(gone, host=hostname(), pid=dead_pid())
    (media_path(gone) / "input.csv").unlink()

    assert sorted(batch_jobs_reap(stale_seconds=300)) == sorted([again.pk.hex, gone.pk.hex])
    again.refresh_from_db()
    assert again.status == "failed"
    assert again.reason == (
        "The inference worker stopped while classifying (killed or restarted) after 64 of 200 "
        "articles; it was resumed 3 times and its worker stopped each time (see "
        "logs/celery_inference.log); upload the file again.")
    assert batch_files(again) == set()
    gone.refresh_from_db()
    assert gone.status == "failed"
    assert gone.reason.endswith("after 64 of 200 articles; upload the file again.")


def test_the_reaper_fails_another_hosts_batch_only_after_stale_seconds(make) -> None:
    fresh = running(make(), host="other-host.example", pid=1, seconds_ago=10)
    stale = running(make(), host="other-host.example", pid=1, seconds_ago=400)

    assert batch_jobs_reap(stale_seconds=300) == [stale.pk.hex]
    stale.refresh_from_db()
    assert stale.status == "failed"
    assert stale.reason == (
        "The inference worker stopped while classifying (no progress from other-host.example "
        "for 400 s) after 64 of 200 articles; upload the file again."
    )
    fresh.refresh_from_db()
    assert fresh.status == "running"


def test_batches_older_than_a_week_are_removed_with_their_files(make, media_root) -> None:
    old, recent = make(), make()
    BatchJob.objects.filter(pk__in=[old.pk, recent.pk]).update(status="completed")
    BatchJob.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=8))
    week_ago = time.time() - 8 * 24 * 3600
    stray = media_root / "batches" / "999" / ("f" * 32)  # a folder whose row is long gone
    stray.mkdir(parents=True)
    (stray / "result.csv").write_text("row\n")
    os.utime(stray, (week_ago, week_ago))

    assert batch_jobs_reap(stale_seconds=300) == []
    assert list(BatchJob.objects.values_list("pk", flat=True)) == [recent.pk]
    assert batch_files(old) == set()
    assert batch_files(recent)
    assert not stray.exists()
