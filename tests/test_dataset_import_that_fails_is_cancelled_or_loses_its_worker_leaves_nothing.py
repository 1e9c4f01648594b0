"""An import that ends any other way than completed leaves nothing: a file the worker refuses
(failed, with the reason every door gives), a cancel (a queued import at once, a running one at
its next chunk of rows, on a real worker), a worker killed mid-import and a message the broker
lost (both failed by the maintenance sweep, with the reason)."""

from __future__ import annotations

import signal
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files import File
from django.urls import reverse
from django.utils import timezone

from dataset_management.imports import (
    LOST_MESSAGE_REASON,
    import_job_cancel,
    import_job_create,
    import_jobs_fail_stale,
)
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


@pytest.mark.django_db
def test_a_queued_import_whose_message_the_broker_lost_is_failed_by_maintenance(
    user, media_root, tmp_path: Path
) -> None:
    # In this test's transaction the message is never sent: the broker does not hold it.
    job = queue(user, write_csv(tmp_path / "small.csv", 20))
    assert import_jobs_fail_stale() == ""  # young: its message may still be on its way
    ImportJob.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(hours=1))
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
def test_an_import_whose_worker_was_killed_is_failed_by_maintenance_and_its_files_removed(
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
    assert done == "1 stale import(s) failed; 1 abandoned import folder(s) removed"
    job.refresh_from_db()
    assert job.status == "failed"
    assert job.reason == (f"The worker importing this file stopped (killed or restarted) after "
                          f"{job.rows_read:,} rows; nothing was saved. Upload the file again.")
    assert not Dataset.objects.exists()
    assert media_files() == set()
    assert import_jobs_fail_stale(stale_seconds=1) == ""
