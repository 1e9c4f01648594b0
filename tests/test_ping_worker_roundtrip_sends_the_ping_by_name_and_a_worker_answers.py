"""The round-trip ping (`ping_worker --roundtrip`, the doctor) is sent by its task name, not by
importing core.tasks, and a real worker on the default queue consumes it and writes the row."""

import pytest
from django.conf import settings

from core.services import worker_ping_roundtrip


@pytest.mark.worker
def test_a_worker_answers_the_ping_sent_by_name(start_worker) -> None:
    worker = start_worker(queues=(settings.QUEUE_DEFAULT,))

    row = worker_ping_roundtrip(timeout=30)

    assert row is not None, worker.log()
    assert row.pid == worker.pid
