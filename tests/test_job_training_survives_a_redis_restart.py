"""Restarting the broker mid-training does not disturb the job (its truth is in the database),
and the worker takes new work once Redis is back."""

from __future__ import annotations

import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest
import redis
from celery import Celery
from django.conf import settings

from classification import services
from core.models import WorkerPing
from tests.job_support import (
    DONE,
    fast_env,
    tiny_bert_config,
    wait_for,
    wait_for_job,
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis(port: int, folder: Path) -> subprocess.Popen:
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no",
         "--dir", str(folder)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port, socket_connect_timeout=0.5)
    wait_for(lambda: _pings(client), 10, "redis to start")
    return proc


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False


@pytest.mark.worker
def test_a_training_survives_a_redis_restart_and_the_worker_reconnects(
    start_worker, slice_dataset, tiny_bert_dir: Path, user, tmp_path: Path
) -> None:
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    server = start_redis(port, tmp_path)
    try:
        start_worker(**fast_env(REDIS_URL=url, CELERY_BROKER_URL=url,
                                MEDLITBOT_FAULT_INJECTION="slow_step=0.2"))
        # Not set as current: later tests must keep sending through the settings broker.
        producer = Celery("test-producer", broker=url, set_as_current=False)
        producer.conf.task_default_queue = settings.QUEUE_TRAINING
        job = services.training_job_create(
            owner=user, dataset=slice_dataset, model_type="custom", name="Redis",
            config=tiny_bert_config(tiny_bert_dir, epochs=1), staff=True,
        )
        producer.send_task(
            "classification.tasks.start_model_training", args=[job.ml_model_id],
            kwargs={"job_id": job.pk}, task_id=str(uuid.uuid4()),
        )

        def training() -> bool:
            job.refresh_from_db()
            return job.phase == "training" and job.current_step >= 2

        wait_for(training, 90, "training")
        server.terminate()
        server.wait(10)
        time.sleep(2)
        server = start_redis(port, tmp_path)

        job = wait_for_job(job, DONE, 90)
        assert job.status == "completed", (job.reason, job.log_tail)
        token = uuid.uuid4().hex
        producer.send_task("core.worker_ping", args=[token])
        wait_for(lambda: WorkerPing.objects.filter(token=token).exists(), 60,
                 "the worker to take new work after the restart")
    finally:
        server.terminate()
        server.wait(10)
