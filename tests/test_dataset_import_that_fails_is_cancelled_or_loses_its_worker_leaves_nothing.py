"""An import that ends any other way than completed leaves nothing: a file the worker refuses
(failed, with the reason every door gives), a cancel (a queued import at once, a running one at
its next chunk of rows, on a real worker). A worker killed mid-import and a message the broker
lost are not the file's fault: the maintenance sweep queues the import again, once, from its
kept upload (on a real worker it then completes, with no new upload); found so a second time,
it is failed with the reason and leaves nothing."""

from __future__ import annotations

import signal
import time
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.core.files import File
from django.urls import reverse
from django.utils import timezone

from core.broker import broker_task_ids
from dataset_management.import_maintenance import LOST_MESSAGE_REASON, import_jobs_fail_stale
from dataset_management.imports import import_job_cancel, import_job_create
from dataset_management.models import Dataset, ImportJob
from projects.services import project_personal
from tests.import_support import import_run_last, import_wait, start_default_worker
from tests.plugins.datasets import media_files

LABELS = ("cardiology", "oncology")


def write_csv(path: Path, rows: int, *, labels: tuple[str, ...] = LABELS) -> Path:
    with path.open("w") as out:
        out.write("title,abstract,label\n")
        for start in range(0, rows, 50_000):
            out.write("".join(f"Title {i},Heart and tumour study {i},{labels[i % len(labels)]}\n"
                              for i in range(start, min(rows, start + 50_000))))
    return path


def queue(user, path: Path, **kwargs) -> ImportJob:
    with path.open("rb") as handle:
        return import_job_create(owner=user, project=project_personal(user=user),
                                 uploaded_file=File(handle, name=path.name),
                                 name=path.stem, **kwargs)


@pytest.mark.django_db
def test_a_file_the_worker_refuses_ends_failed_with_its_reason_and_leaves_nothing(
    user, media_root, tmp_path: Path
) -> None:
    # Its first rows read well (the web queues it); only the whole file shows one label.
    queued = queue(user, write_csv(tmp_path / "one_label.csv", 50, labels=("cardiology",)))
    assert queued.status == "queued"
    assert media_files() == {queued.input_path}
    job = import_run_last()
    assert job.status == "failed"
    assert job.reason.startswith("Only one label ('cardiology') found: a classifier needs")
    assert (job.rows_read, job.dataset_id, job.input_path) == (50, None, "")
    assert not Dataset.objects.exists()
    assert media_files() == set()


@pytest.mark.django_db
def test_a_queued_import_is_cancelled_at_once_and_its_file_removed(
    user, media_root, tmp_path: Path
) -> None:
    job = queue(user, write_csv(tmp_path / "small.csv", 20))
    job = import_job_cancel(user=user, job=job)
    assert (job.status, job.reason) == ("cancelled", "Cancelled by alice; nothing was saved.")
    assert media_files() == set()
    assert not ImportJob.objects.filter(status="queued").exists()


def broker_forgets_default_queue() -> None:
    """Redis restarted empty, for this run's default queue only."""
    redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(settings.QUEUE_DEFAULT)


@pytest.mark.django_db
def test_a_queued_import_whose_message_the_broker_lost_is_queued_again_once_then_failed(
    user, media_root, clean_broker, tmp_path: Path
) -> None:
    # In this test's transaction the message is never sent: the broker does not hold it.
    job = queue(user, write_csv(tmp_path / "small.csv", 20))
    assert import_jobs_fail_stale() == ""  # young: its message may still be on its way
    ImportJob.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(hours=1))
    assert import_jobs_fail_stale() == "1 stale import(s) queued again"
    job.refresh_from_db()
    assert job.status == "queued"
    assert job.options["retried"] == job.message == (
        "Queued again once: the job queue lost its message (Redis restarted or was flushed); "
        "its upload was kept.")
    assert media_files() == {job.input_path}  # no new upload is needed
    assert job.celery_task_id in broker_task_ids(queue=settings.QUEUE_DEFAULT)

    broker_forgets_default_queue()  # lost a second time
    assert import_jobs_fail_stale() == "1 stale import(s) failed"
    job.refresh_from_db()
    assert (job.status, job.reason) == ("failed", LOST_MESSAGE_REASON)
    assert media_files() == set()
    assert import_jobs_fail_stale() == ""  # idempotent


@pytest.mark.worker
def test_a_running_import_stops_at_its_next_chunk_when_cancelled_and_keeps_nothing(
    start_worker, media_root, alice_client, user, tmp_path: Path
) -> None:
    start_default_worker(start_worker)
    job = queue(user, write_csv(tmp_path / "large.csv", 400_000))
    import_wait(job.pk, until=lambda j: j.status == "running" and j.rows_read > 0)
    answer = alice_client.post(reverse("datasets:import_cancel", args=[job.pk]))
    assert answer.status_code == 302
    job = import_wait(job.pk)
    assert (job.status, job.reason) == ("cancelled", "Cancelled by alice; nothing was saved.")
    assert 0 < job.rows_read < 400_000
    assert not Dataset.objects.exists()
    assert media_files() == set()  # the upload, the working folder and its Parquet files
    page = alice_client.get(reverse("datasets:import_detail", args=[job.pk])).content.decode()
    assert "Cancelled by alice; nothing was saved." in page


@pytest.mark.worker
def test_an_import_whose_worker_was_killed_is_queued_again_and_completes_on_a_new_worker(
    start_worker, media_root, user, tmp_path: Path
) -> None:
    worker = start_default_worker(start_worker)
    job = queue(user, write_csv(tmp_path / "large.csv", 400_000))
    import_wait(job.pk, until=lambda j: j.rows_read > 0)
    worker.kill(signal.SIGKILL)
    assert import_jobs_fail_stale() == ""  # its heartbeat is fresh: it may be working
    assert any(p.startswith("datasets/.incoming-") for p in media_files())
    time.sleep(1.5)
    done = import_jobs_fail_stale(stale_seconds=1)
    assert done == "1 stale import(s) queued again; 1 abandoned import folder(s) removed"
    job.refresh_from_db()
    assert job.status == "queued"
    assert job.message.startswith("Queued again once: its worker stopped (killed or restarted) "
                                  "after ")
    start_default_worker(start_worker)  # the worker comes back: no manual step, no new upload
    job = import_wait(job.pk, timeout=300)
    assert job.status == "completed", job.reason
    assert job.dataset.row_count == 400_000
    assert job.options["retried"].startswith("Queued again once: its worker stopped")
    assert job.input_path == ""
    assert not any(p.startswith("imports/") for p in media_files())  # the upload went


@pytest.mark.worker
def test_an_import_whose_worker_dies_a_second_time_is_failed_and_its_files_removed(
    start_worker, media_root, user, tmp_path: Path
) -> None:
    worker = start_default_worker(start_worker)
    job = queue(user, write_csv(tmp_path / "large.csv", 400_000))
    import_wait(job.pk, until=lambda j: j.rows_read > 0)
    worker.kill(signal.SIGKILL)
    ImportJob.objects.filter(pk=job.pk).update(options={**job.options, "retried": "once"})
    time.sleep(1.5)
    done = import_jobs_fail_stale(stale_seconds=1)
    assert done == "1 stale import(s) failed; 1 abandoned import folder(s) removed"
    job.refresh_from_db()
    assert job.status == "failed"
    assert job.reason == (f"The worker importing this file stopped (killed or restarted) after "
                          f"{job.rows_read:,} rows; nothing was saved. Upload the file again.")
    assert not Dataset.objects.exists()
    assert media_files() == set()
    assert import_jobs_fail_stale(stale_seconds=1) == ""
