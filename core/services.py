import time
import uuid

from django.db import transaction

from core.models import WorkerPing


def worker_ping_roundtrip(*, timeout: float = 10.0) -> WorkerPing | None:
    """Send a ping through the broker and wait for a worker to write it back.

    Returns the row a worker wrote, or None if no worker answered within `timeout`.
    """
    from core.tasks import worker_ping

    token = uuid.uuid4().hex
    transaction.on_commit(lambda: worker_ping.delay(token))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = WorkerPing.objects.filter(token=token).first()
        if row is not None:
            return row
        time.sleep(0.1)
    return None
