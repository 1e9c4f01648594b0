"""Helpers for the dataset-import tests: run queued imports in-process, start a default-queue
worker like start_m1.sh's inference worker, and wait for an import to end."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.conf import settings

from dataset_management.imports import import_job_run
from dataset_management.models import ImportJob
from tests.job_support import fast_env

ENDED = {"completed", "failed", "cancelled"}


def imports_run_queued() -> list[ImportJob]:
    """Run every queued import here, with the code the worker's task runs (import_job_run):
    for tests whose transaction never commits, so no message is ever sent."""
    return [job for pk in ImportJob.objects.filter(status="queued").order_by("pk")
            .values_list("pk", flat=True) if (job := import_job_run(job_id=pk)) is not None]


def import_run_last() -> ImportJob:
    """Run the newest queued import here and return it ended."""
    jobs = imports_run_queued()
    assert jobs, "no import was queued"
    return jobs[-1]


def start_default_worker(start_worker: Callable[..., Any], **env: str) -> Any:
    """A threaded worker on the default queue (start_m1.sh's inference worker serves it),
    sharing this test's folders."""
    return start_worker(queues=(settings.QUEUE_DEFAULT,), pool="threads", concurrency=2,
                        **fast_env(**env))


def import_wait(pk: int, *, timeout: float = 120.0,
                until: Callable[[ImportJob], bool] | None = None) -> ImportJob:
    """Poll the row until `until(job)` (default: it ended); AssertionError after `timeout`."""
    until = until or (lambda job: job.status in ENDED)
    deadline = time.monotonic() + timeout
    while True:
        job = ImportJob.objects.get(pk=pk)
        if until(job):
            return job
        assert time.monotonic() < deadline, (job.status, job.rows_read, job.message, job.reason)
        time.sleep(0.1)


def api_import(client: Any, data: dict[str, Any], *, query: str = "") -> dict[str, Any]:
    """POST /api/datasets/ (202 with the import), run the import here as the worker would,
    and return the dataset's representation as GET returns it (`query`, e.g. ?expand=report)."""
    answer = client.post("/api/datasets/", data, format="multipart")
    assert answer.status_code == 202, answer.content
    job = import_run_last()
    assert job.status == "completed", job.reason
    followed = client.get(answer.json()["url"]).json()
    return client.get(followed["dataset_url"] + query).json()
