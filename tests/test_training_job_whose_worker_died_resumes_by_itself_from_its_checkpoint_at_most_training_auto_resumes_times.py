"""A training job whose worker died (found at a worker's start or by the cleanup) is queued again
by itself from its latest checkpoint, as a batch's shards are: a new message in the broker,
attempt + 1, each time recorded in its history with why. After TRAINING_AUTO_RESUMES such
resumes it stays stalled, its reason saying so, and a person's Resume still works."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from classification import paths, services
from classification.jobs.reaper import (
    training_jobs_cleanup,
    training_jobs_reconcile_on_worker_start,
)
from classification.models import StatusChange, TrainingJob
from core import broker

pytestmark = pytest.mark.django_db(transaction=True)  # the message is sent when a commit happens


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def run_until_its_worker_dies(job: TrainingJob, *, step: int) -> None:
    """Claimed by a worker that saved a checkpoint at `step`, then died."""
    assert services.training_job_claim(job=job)
    checkpoint = paths.job_output_dir(job.pk) / f"checkpoint-{step}"
    checkpoint.mkdir(parents=True)
    (checkpoint / paths.COMPLETE_MARKER).write_text("{}")
    TrainingJob.objects.filter(pk=job.pk).update(worker_pid=dead_pid())


def auto_resumes(job: TrainingJob) -> list[str]:
    return list(StatusChange.objects.filter(job=job, source="stalled", target="queued")
                .values_list("reason", flat=True))


def assert_queued_again(job: TrainingJob, *, attempt: int, step: int) -> None:
    job.refresh_from_db()
    assert job.status == "queued"
    assert job.attempt == attempt
    assert job.checkpoint_path.endswith(f"checkpoint-{step}")
    assert job.reason.startswith(f"Resumed by itself ({attempt - 1} of 2) from its latest "
                                 "checkpoint")
    assert broker.broker_holds_task(task_id=job.celery_task_id, queue=job.queue) is True


def test_it_resumes_twice_by_itself_then_stays_stalled_saying_so(
        settings: Any, slice_dataset: Any, user: Any) -> None:
    settings.TRAINING_AUTO_RESUMES = 2
    job = services.training_job_create(owner=user, dataset=slice_dataset,
                                       model_type="minilm", name="Killed twice", config={})

    run_until_its_worker_dies(job, step=10)
    checks = training_jobs_cleanup(stale_seconds=3600)
    assert [c.action for c in checks] == ["marked stalled, resumed by itself"]
    assert_queued_again(job, attempt=2, step=10)

    run_until_its_worker_dies(job, step=20)
    assert training_jobs_reconcile_on_worker_start() == [job.pk]
    assert_queued_again(job, attempt=3, step=20)

    run_until_its_worker_dies(job, step=30)
    checks = training_jobs_cleanup(stale_seconds=3600)
    assert [c.action for c in checks] == ["marked stalled, left stalled (out of automatic "
                                          "resumes)"]
    job.refresh_from_db()
    assert job.status == "stalled"
    assert job.attempt == 3
    assert "is gone" in job.reason
    assert job.reason.endswith("Not resumed by itself: its worker died after 2 automatic "
                               "resume(s), the most TRAINING_AUTO_RESUMES (2) allows.")
    reasons = auto_resumes(job)
    assert len(reasons) == 2
    assert "worker process" in reasons[0]
    assert "is gone" in reasons[0]
    stalls = StatusChange.objects.filter(job=job, source="running", target="stalled")
    assert stalls.count() == 3  # each death is in the history with its own reason

    # A person may still resume it; that does not count against the automatic ones.
    services.training_job_resume(job=job, actor=user)
    job.refresh_from_db()
    assert (job.status, job.attempt, job.reason) == ("queued", 4, "")
    assert len(auto_resumes(job)) == 3
    assert StatusChange.objects.filter(job=job, reason__startswith="Resumed by itself").count() == 2


def test_with_no_automatic_resumes_it_stays_stalled(settings: Any, slice_dataset: Any,
                                                    user: Any) -> None:
    settings.TRAINING_AUTO_RESUMES = 0
    job = services.training_job_create(owner=user, dataset=slice_dataset,
                                       model_type="minilm", name="Left", config={})
    run_until_its_worker_dies(job, step=10)
    assert training_jobs_reconcile_on_worker_start() == [job.pk]
    job.refresh_from_db()
    assert (job.status, job.attempt) == ("stalled", 1)
    assert "resume continues from checkpoint-10" in job.reason
    assert "by itself" not in job.reason
