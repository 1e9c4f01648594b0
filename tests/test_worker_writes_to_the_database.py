"""A real solo-pool worker, on the tests' own Redis DB, consumes a task and writes a row."""

import time
import uuid

import pytest

from core.models import WorkerPing
from core.tasks import worker_ping


@pytest.mark.worker
def test_a_solo_worker_consumes_a_task_and_the_test_reads_its_row_back(start_worker) -> None:
    worker = start_worker()
    token = uuid.uuid4().hex

    result = worker_ping.delay(token)

    assert result.id
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not WorkerPing.objects.filter(token=token).exists():
        time.sleep(0.1)
    row = WorkerPing.objects.get(token=token)
    assert row.pid == worker.pid
    assert "(solo)" in worker.log()
