"""Redis killed and restarted empty while jobs wait in its queues: the messages are gone, but
the rows are not. With no manual step (celery beat's maintenance, run by a worker), every
queued training and import is sent again, once, recording why, and completes; in the probe the
18 queued jobs were failed and each needed a Resume. Redis here is a private redis-server on a
free port, so the suite's own broker is never touched."""

from __future__ import annotations

import socket
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from celery import Celery
from django.conf import settings
from django.core.files import File
from django.utils import timezone

from classification import services
from classification.models import TrainingJob
from dataset_management.imports import TASK as IMPORT_TASK
from dataset_management.imports import import_job_create
from dataset_management.models import ImportJob
from projects.services import project_personal
from tests.job_support import fast_env, wait_for
from tests.plugins.worker import ROOT, all_queues, worker_env

pytestmark = [pytest.mark.worker, pytest.mark.timeout(300)]
TRAINING_TASK = "classification.tasks.start_model_training"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_redis(port: int, folder: Path) -> subprocess.Popen:
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly",
                             "no", "--dir", str(folder)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(port=port, socket_connect_timeout=0.5)

    def pings() -> bool:
        try:
            return bool(client.ping())
        except redis.ConnectionError:
            return False

    wait_for(pings, 10, "redis to start")
    return proc


def csv_file(path: Path, rows: int = 60) -> Path:
    path.write_text("title,abstract,label\n" + "".join(
        f"Title {i},Heart and tumour study {i},{'ab'[i % 2]}\n" for i in range(rows)))
    return path


def test_queued_jobs_lost_in_a_redis_restart_are_sent_again_and_complete(
        start_worker, slice_dataset, user, tmp_path: Path, django_capture_on_commit_callbacks
) -> None:
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    server = start_redis(port, tmp_path)
    producer = Celery("test-producer", broker=url, set_as_current=False)
    beat = None
    try:
        # Rows made as every door makes them; their messages go to the private Redis.
        with django_capture_on_commit_callbacks(execute=False):
            trainings = [services.training_job_create(
                owner=user, dataset=slice_dataset, model_type="tfidf_logreg",
                name=f"Lost {i}", config={}) for i in range(3)]
            imports = []
            for i in range(3):
                with csv_file(tmp_path / f"articles{i}.csv", 60 + i).open("rb") as handle:
                    imports.append(import_job_create(
                        owner=user, project=project_personal(user=user), name=f"Import {i}",
                        uploaded_file=File(handle, name=f"articles{i}.csv")))
        for job in trainings:
            producer.send_task(TRAINING_TASK, args=[job.ml_model_id], kwargs={"job_id": job.pk},
                               task_id=job.celery_task_id, queue=job.queue)
        for job in imports:
            producer.send_task(IMPORT_TASK, args=[job.pk], task_id=job.celery_task_id,
                               queue=settings.QUEUE_DEFAULT)
        assert sum(redis.Redis(port=port).llen(q) for q in all_queues()) == 6

        server.kill()  # killed, and back with nothing: no save, no append-only file
        server.wait(10)
        server = start_redis(port, tmp_path)
        assert sum(redis.Redis(port=port).llen(q) for q in all_queues()) == 0
        # Waiting longer than maintenance's threshold before it may judge a message lost.
        an_hour_ago = timezone.now() - timedelta(hours=1)
        TrainingJob.objects.update(updated_at=an_hour_ago)
        ImportJob.objects.update(created_at=an_hour_ago)

        # Heartbeat limits of a loaded machine, not the suite's fastest: this is not about stalls.
        env = fast_env(REDIS_URL=url, CELERY_BROKER_URL=url, HEARTBEAT_TIMEOUT="60",
                       STALL_TIMEOUT_FLOOR="120", STALL_TIMEOUT_CEILING="180")
        start_worker(**env)
        beat = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "medlitbot_project", "beat",
             "--loglevel=INFO", f"--schedule={tmp_path / 'beat-schedule'}"],
            cwd=ROOT, env=worker_env(MAINTENANCE_INTERVAL_SECONDS="2", **env),
            stdout=(tmp_path / "beat.log").open("ab"), stderr=subprocess.STDOUT)

        def all_ended() -> bool:
            return not (TrainingJob.objects.filter(status__in=["queued", "running"]).exists()
                        or ImportJob.objects.filter(status__in=["queued", "running"]).exists())

        wait_for(all_ended, 180, "the lost jobs to be sent again and complete")
    finally:
        if beat is not None:
            beat.terminate()
            beat.wait(20)
        server.terminate()
        server.wait(10)
    for job in TrainingJob.objects.all():
        assert job.status == "completed", (job.pk, job.status, job.reason)
        assert "Requeued once: the broker lost its task message" in job.log_tail
    for job in ImportJob.objects.all():
        assert job.status == "completed", (job.pk, job.status, job.reason)
        assert job.options["retried"] == (
            "Queued again once: the job queue lost its message (Redis restarted or was "
            "flushed); its upload was kept.")
