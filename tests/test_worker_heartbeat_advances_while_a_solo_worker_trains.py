"""A solo training worker blocked inside a training still writes its heartbeat row: the row
appears when the worker is ready, its last_seen keeps advancing mid-training, it names the job,
and ping_worker and /readyz report the worker alive and busy; afterwards it is idle again."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client

from classification import services
from core.models import WorkerHeartbeat
from tests.job_support import fast_env, tiny_bert_config, wait_for, wait_for_job, wait_for_step

pytestmark = [pytest.mark.worker, pytest.mark.timeout(240)]


def row_of(worker) -> WorkerHeartbeat | None:
    return WorkerHeartbeat.objects.filter(pid=worker.pid).first()


def test_the_training_worker_beats_mid_training_and_is_reported_busy_with_its_job(
    start_worker, slice_dataset, tiny_bert_dir: Path, user
) -> None:
    inference = start_worker(queues=(settings.QUEUE_INFERENCE, settings.QUEUE_DEFAULT),
                             pool="threads", concurrency=2, WORKER_HEARTBEAT_INTERVAL="1")
    training = start_worker(
        queues=(settings.QUEUE_TRAINING,), pool="solo",
        **fast_env(MEDLITBOT_FAULT_INJECTION="slow_step=0.5", WORKER_HEARTBEAT_INTERVAL="1"),
    )
    row = wait_for(lambda: row_of(training), 15, "the training worker's heartbeat row")
    assert row.queues == [settings.QUEUE_TRAINING]
    assert row.pool == "solo"
    assert row.state == "idle"
    assert wait_for(lambda: row_of(inference), 15, "the inference worker's row").pool == "threads"

    job = services.training_job_create(
        owner=user, dataset=slice_dataset, model_type="custom", name="Slow",
        config=tiny_bert_config(tiny_bert_dir, epochs=1), staff=True,
    )
    wait_for_step(job, 1)
    row = row_of(training)
    assert row.state == "busy"
    assert row.current_job == f"training job {job.pk}"
    assert row.current_task == "classification.tasks.start_model_training"
    assert row.current_task_id == job.celery_task_id

    # The solo pool's only thread is inside the task; the heartbeat still moves.
    seen = [row.last_seen]
    deadline = time.monotonic() + 20
    while len(set(seen)) < 4 and time.monotonic() < deadline:
        time.sleep(0.5)
        seen.append(row_of(training).last_seen)
    job.refresh_from_db()
    assert job.status == "running"
    assert job.current_step < job.total_steps, "trained too fast to observe"
    assert len(set(seen)) >= 4, seen
    assert seen == sorted(seen)

    out = io.StringIO()
    call_command("ping_worker", stdout=out)
    assert f"{row.hostname} (solo, pid {training.pid}" in out.getvalue()
    assert f"busy: training job {job.pk}" in out.getvalue()
    readiness = Client().get("/readyz")
    assert readiness.status_code == 200, readiness.json()
    assert readiness.json()["checks"]["worker:training"] == {
        "ok": True, "queue": settings.QUEUE_TRAINING, "live": 1, "busy": 1,
    }

    job = wait_for_job(job, {"completed", "failed", "stalled", "cancelled"}, timeout=150)
    assert job.status == "completed", job.reason
    idle = wait_for(lambda: (r := row_of(training)) and r.state == "idle" and r, 10, "idle")
    assert idle.current_job == ""
    assert idle.current_task_id == ""
