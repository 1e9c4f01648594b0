"""Asking the broker whether it still holds a task message.

A queued job waits for a message in Redis. If Redis restarts without persistence, or someone
flushes it, the message is gone and the job would wait forever: exactly the silent hang
MedLitBot promises never to have. Celery's own `inspect` cannot help here, because a solo-pool
worker busy training answers no control messages.
"""

from __future__ import annotations

import json
import logging

from celery import current_app
from django.conf import settings

logger = logging.getLogger(__name__)


def _task_id(raw: bytes | str) -> str | None:
    try:
        payload = json.loads(raw)
    except (TypeError, ValueError):
        return None
    if isinstance(payload, list):  # kombu's unacked hash stores [message, exchange, key]
        payload = payload[0] if payload else {}
    headers = payload.get("headers") if isinstance(payload, dict) else None
    return headers.get("id") if isinstance(headers, dict) else None


def broker_task_ids(*, queue: str) -> set[str] | None:
    """Ids of the task messages the broker holds for `queue`, waiting or reserved by a worker;
    None when the broker is not Redis or cannot be read (then nothing may be judged lost).

    Looks in the waiting queue and in kombu's `unacked` hash, which holds the message a worker
    has reserved (prefetched) but not yet started.
    """
    app = current_app
    if not str(app.conf.broker_url or "").startswith(("redis://", "rediss://")):
        return None
    try:
        with app.connection_for_read() as conn:
            client = conn.default_channel.client
            raw = [*client.lrange(queue, 0, -1), *client.hvals("unacked")]
    except Exception as exc:  # the broker being down is itself the answer "cannot tell"
        logger.warning("could not read the broker's queue %s: %s", queue, exc)
        return None
    return {task_id for item in raw if (task_id := _task_id(item))}


def broker_holds_task(*, task_id: str, queue: str | None = None) -> bool | None:
    """True or False when the broker is Redis and can be read; None when it cannot tell.

    `queue` defaults to the CPU training queue; a job's message waits in `TrainingJob.queue`.
    """
    held = broker_task_ids(queue=queue or settings.QUEUE_TRAINING)
    return None if held is None else task_id in held
