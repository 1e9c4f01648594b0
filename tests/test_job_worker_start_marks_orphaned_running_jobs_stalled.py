"""At worker start, a job left running on this host by a dead worker becomes stalled with the
reason "worker restarted"; a job of a live MedLitBot process elsewhere is left alone."""

from __future__ import annotations

import subprocess
import sys

from classification import services
from classification.models import TrainingJob
from core import processes


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_running_jobs_of_a_dead_worker_on_this_host_become_stalled(slice_dataset, user) -> None:
    job = services.training_job_create(
        owner=user, dataset=slice_dataset, model_type="tfidf_logreg", name="Orphan", config={}
    )
    services.training_job_claim(job=job)
    TrainingJob.objects.filter(pk=job.pk).update(worker_pid=dead_pid())
    other = services.training_job_create(
        owner=user, dataset=slice_dataset, model_type="tfidf_logreg", name="Elsewhere", config={}
    )
    services.training_job_claim(job=other)
    TrainingJob.objects.filter(pk=other.pk).update(worker_host="another-host")

    assert services.training_jobs_reconcile_on_worker_start() == [job.pk]
    job.refresh_from_db()
    other.refresh_from_db()
    assert job.status == "stalled"
    assert "worker restarted" in job.reason
    assert other.status == "running"
    assert processes.hostname() != "another-host"
