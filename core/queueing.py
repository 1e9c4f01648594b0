"""Sending a task so that a broker outage is a clear answer, never a 500 or an orphaned row.

Services create their row inside a transaction and send the task, by its registered name, with
``task_send_on_commit``.
If the broker cannot take the message, the caller's ``on_unreachable`` marks the row failed
with ``UNREACHABLE_REASON`` and ``QueueUnavailable`` reaches the view, which answers 503
(core.middleware.QueueUnavailableMiddleware, api.exceptions for DRF).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from celery import current_app
from django.db import transaction

logger = logging.getLogger(__name__)

UNREACHABLE_REASON = "The job queue is unreachable (is Redis running?); nothing was started."


class QueueUnavailable(Exception):
    """The broker refused or could not be reached; the message names what was not started."""

    def __init__(self, message: str = UNREACHABLE_REASON) -> None:
        super().__init__(message)
        self.message = message


def task_send(*, name: str, args: tuple = (), kwargs: dict[str, Any] | None = None,
              task_id: str | None = None, queue: str | None = None) -> None:
    """Send the task registered as `name`; QueueUnavailable instead of the transport's errors.

    By name, so a service never imports the tasks module (which imports the services).
    CELERY_TASK_ROUTES applies as for ``apply_async``; `queue` overrides it for this one
    message (a job routed to the GPU queue).
    """
    options = {"queue": queue} if queue else {}
    try:
        current_app.send_task(name, args=args, kwargs=kwargs or {}, task_id=task_id, **options)
    except Exception as exc:  # kombu raises OperationalError, redis its own; all mean "not sent"
        logger.warning("could not send %s (%s): %s", name, task_id, exc)
        raise QueueUnavailable() from exc


def task_send_on_commit(*, name: str, args: tuple = (), kwargs: dict[str, Any] | None = None,
                        task_id: str | None = None, queue: str | None = None,
                        on_unreachable: Callable[[str], None]) -> None:
    """Send once the surrounding transaction commits; on failure call ``on_unreachable(reason)``.

    The callback runs after the commit, so it must record the failure in a transaction of its
    own (a conditional UPDATE is enough). The exception then propagates out of the atomic block
    that registered this, to the view.
    """

    def send() -> None:
        try:
            task_send(name=name, args=args, kwargs=kwargs, task_id=task_id, queue=queue)
        except QueueUnavailable as exc:
            on_unreachable(exc.message)
            raise

    transaction.on_commit(send)
