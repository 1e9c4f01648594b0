"""manage.py ping_worker [--queue Q ...] [--timeout S] [--roundtrip]: are the workers attached?

Reads the heartbeat rows every worker writes (core.heartbeat), so a solo worker busy training
for hours still answers, which `celery inspect` cannot. Prints each worker with its queues and
what it does ("busy: training job 12"), and exits 0 only when a live worker serves each queue
asked for (default: training, inference and default; the GPU queue, training.gpu, only when
named, since an install without GPUs is complete). --timeout waits that long for missing
workers to appear (a worker that was just started). --roundtrip also sends a ping through the
broker that a worker on the default queue must write back: broker, worker and database proven
together.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from core import selectors
from core.models import WorkerHeartbeat
from core.services import worker_ping_roundtrip

POLL_SECONDS = 0.5


def describe(row: WorkerHeartbeat) -> str:
    """One line per worker: "training@host (solo, pid 12 on host) queues training: busy: ..."."""
    if row.state == WorkerHeartbeat.State.STOPPED:
        status = "stopped"
    elif not row.is_live():
        status = "missing"
    else:
        status = row.activity
    # Only GPU workers: what they were started with says which GPU they train on.
    devices = (f", CUDA_VISIBLE_DEVICES={row.devices if row.devices is not None else 'unset'}"
               if row.serves(settings.QUEUE_TRAINING_GPU) else "")
    return (f"{row.hostname} ({row.pool}, pid {row.pid} on {row.host}{devices}) "
            f"queues {', '.join(row.queues) or '-'}: {status}; "
            f"heartbeat {row.age_seconds():.0f} s ago")


class Command(BaseCommand):
    help = "Show the live Celery workers from their heartbeats; fail if a queue has none."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--queue", action="append", dest="queues", metavar="QUEUE",
            help="a queue that must be served: training, inference, default, training.gpu or "
                 "a full queue name; repeatable (default: the first three)",
        )
        parser.add_argument("--timeout", type=float, default=0.0,
                            help="seconds to wait for missing workers to appear (default 0)")
        parser.add_argument("--roundtrip", action="store_true",
                            help="also send a ping through the broker to the default queue")

    def handle(self, *args: Any, queues: list[str] | None, timeout: float, roundtrip: bool,
               **options: Any) -> None:
        wanted = [selectors.worker_queue_resolve(name=q) for q in queues] if queues else None
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            coverage = selectors.worker_queue_coverage(queues=wanted)
            if all(entry.ok for entry in coverage) or time.monotonic() >= deadline:
                break
            time.sleep(POLL_SECONDS)

        rows = selectors.worker_heartbeat_list()
        for row in rows:
            self.stdout.write(describe(row))
        if not rows:
            self.stdout.write("no worker has written a heartbeat yet")
        missing = [entry.problem() for entry in coverage if not entry.ok]
        if missing:
            raise CommandError("; ".join(missing) + " (see logs/celery_*.log)")

        if roundtrip:
            row = worker_ping_roundtrip(timeout=max(timeout, 10.0))
            if row is None:
                raise CommandError("the heartbeats are fresh but no worker answered a ping "
                                   "through the broker (is the default queue consumed?)")
            self.stdout.write(f"round trip through the broker: answered by {row.hostname} "
                              f"pid {row.pid}")
        served = ", ".join(entry.queue for entry in coverage)
        self.stdout.write(self.style.SUCCESS(f"workers attached: a live worker serves {served}"))
