"""cleanup_stuck_training: --dry-run changes nothing, a stale heartbeat is marked stalled once,
healthy jobs are left alone, and it exits 0 with nothing to do."""

from __future__ import annotations

import io
import subprocess
import sys
from datetime import timedelta

from django.core.management import call_command
from django.utils import timezone

from classification import services
from classification.models import TrainingJob


def running_job(dataset, user, name: str) -> TrainingJob:
    job = services.training_job_create(
        owner=user, dataset=dataset, model_type="tfidf_logreg", name=name, config={}
    )
    services.training_job_claim(job=job)  # claimed by this (live, pytest) process
    return job


def test_cleanup_marks_only_the_silent_job_and_a_second_run_does_nothing(slice_dataset, user):
    silent = running_job(slice_dataset, user, "Silent")
    healthy = running_job(slice_dataset, user, "Healthy")
    # A live process that looks like a worker (its command line names celery).
    fake_worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "celery"])
    TrainingJob.objects.filter(pk=healthy.pk).update(worker_pid=fake_worker.pid)
    TrainingJob.objects.filter(pk=silent.pk).update(
        heartbeat_at=timezone.now() - timedelta(minutes=30)
    )

    dry = io.StringIO()
    call_command("cleanup_stuck_training", "--dry-run", "--stale-minutes", "10", stdout=dry)
    assert "would mark stalled" in dry.getvalue()
    assert TrainingJob.objects.get(pk=silent.pk).status == "running"

    out = io.StringIO()
    call_command("cleanup_stuck_training", "--stale-minutes", "10", stdout=out)
    silent.refresh_from_db()
    healthy.refresh_from_db()
    assert silent.status == "stalled"
    assert "no heartbeat for 30.0 min" in silent.reason
    assert healthy.status == "running"
    assert "1 stuck job(s) handled; 1 healthy" in out.getvalue()

    again = io.StringIO()
    call_command("cleanup_stuck_training", "--stale-minutes", "10", stdout=again)
    assert "0 stuck job(s) handled" in again.getvalue()
    fake_worker.kill()
    fake_worker.wait()


def test_force_marks_every_running_job_but_never_signals_a_foreign_pid(slice_dataset, user):
    job = running_job(slice_dataset, user, "Forced")
    TrainingJob.objects.filter(pk=job.pk).update(child_pid=1)  # init: never ours to kill
    out = io.StringIO()
    call_command("cleanup_stuck_training", "--force", stdout=out)
    job.refresh_from_db()
    assert job.status == "stalled"
    assert "--force" in job.reason
    assert "killed" not in out.getvalue()
