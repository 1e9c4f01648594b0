"""manage.py ping_worker [--timeout S]: prove a Celery worker is attached, not merely running.

A ping travels through the broker and the worker writes it to the database, so success means
broker, worker and database all work together. Exits non-zero when no worker answers.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from core.services import worker_ping_roundtrip


class Command(BaseCommand):
    help = "Send a ping through the broker and wait for a worker to write it to the database."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--timeout", type=float, default=30.0)

    def handle(self, *args: Any, timeout: float, **options: Any) -> None:
        row = worker_ping_roundtrip(timeout=timeout)
        if row is None:
            raise CommandError(
                f"no Celery worker answered within {timeout:.0f} s; see logs/celery_m1.log"
            )
        self.stdout.write(f"worker attached: {row.hostname} pid {row.pid}")
