"""What a worker's heartbeat row says it is doing: the job a task works on in a few words, the
longest-running task when a threads pool runs several, and idle again when they end."""

from __future__ import annotations

import pytest

from core.heartbeat import HeartbeatThread, task_job
from core.models import WorkerHeartbeat


def test_tasks_are_described_by_the_job_they_work_on() -> None:
    training = "classification.tasks.start_model_training"
    assert task_job(training, [5], {"job_id": 12}) == "training job 12"
    assert task_job(training, [5, None, 13], {}) == "training job 13"
    assert task_job(training, [5, {"total_epochs": 1}], {}) == "training model 5"
    batch = "classification.tasks.batch_job_run"
    assert task_job(batch, ["0123456789abcdef0123456789abcdef"], {}) == "batch 01234567"
    assert task_job("core.tasks.maintenance_run", [], {}) == "maintenance run"


@pytest.mark.django_db(transaction=True)  # beat() manages its connection, as in its thread
def test_a_threads_pool_running_two_tasks_shows_the_older_and_counts_the_other() -> None:
    beat = HeartbeatThread(hostname="inference@box", queues=["inference", "default"],
                           pool="threads", concurrency=2, interval=5.0)
    assert beat.beat()
    assert WorkerHeartbeat.objects.get(hostname="inference@box").state == "idle"

    beat.task_started(name="classification.tasks.batch_job_run", task_id="a", job="batch 1")
    beat.task_started(name="core.tasks.maintenance_run", task_id="b", job="maintenance run")
    assert beat.beat()
    row = WorkerHeartbeat.objects.get(hostname="inference@box")
    assert row.state == "busy"
    assert row.current_job == "batch 1 (+1 more)"
    assert row.current_task_id == "a"
    assert row.activity == "busy: batch 1 (+1 more)"

    beat.task_finished(task_id="a")
    beat.task_finished(task_id="b")
    beat.stopping = True
    assert beat.beat()
    row.refresh_from_db()
    assert row.state == "stopping"
    assert row.current_job == ""
    assert row.busy_since is None
