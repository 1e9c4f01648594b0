"""The one module that knows how the broker (Redis, through kombu) lays out its keys.

kombu's Redis transport keeps a queue's waiting messages in a list named after the queue, plus
one list per priority step for messages sent with a priority, and the messages a worker has
reserved but not acknowledged in the `unacked` hash. Readiness, metrics, the doctor and the
reapers read the broker only through the functions here.

Why read it at all: a queued job waits for a message in Redis. If Redis restarts without
persistence, or someone flushes it, the message is gone and the job would wait forever: exactly
the silent hang MedLitBot promises never to have. Celery's own `inspect` cannot help, because a
solo-pool worker busy training answers no control messages.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

from celery import current_app
from django.conf import settings

logger = logging.getLogger(__name__)

# A priority list's key is the queue's name + "\x06\x16" + the step.
REDIS_PRIORITY_SEP = "\x06\x16"
REDIS_PRIORITY_STEPS = (3, 6, 9)
REDIS_UNACKED_KEY = "unacked"


def broker_is_redis(url: str | None = None) -> bool:
    """Whether `url` (by default CELERY_BROKER_URL) names a Redis broker."""
    return str(url if url is not None else settings.CELERY_BROKER_URL).startswith(
        ("redis://", "rediss://"))


def redis_client(*, timeout: float) -> Any:
    """A client of the Redis broker that gives up after `timeout` seconds; the caller closes it."""
    import redis

    return redis.Redis.from_url(
        settings.CELERY_BROKER_URL, socket_connect_timeout=timeout, socket_timeout=timeout
    )


def broker_ping(*, timeout: float = 2.0) -> None:
    """Returns when the Redis broker answers a PING within `timeout`; raises what failed."""
    client = redis_client(timeout=timeout)
    try:
        client.ping()
    finally:
        client.close()


def queue_keys(queue: str) -> list[str]:
    """Every list that holds `queue`'s waiting messages: its own, then one per priority step."""
    return [queue, *(f"{queue}{REDIS_PRIORITY_SEP}{step}" for step in REDIS_PRIORITY_STEPS)]


def queue_depths(*, queues: Iterable[str], timeout: float) -> dict[str, int]:
    """Messages waiting in each queue (LLEN over its lists); raises when Redis cannot answer."""
    queues = list(queues)
    client = redis_client(timeout=timeout)
    try:
        pipe = client.pipeline(transaction=False)
        for queue in queues:
            for key in queue_keys(queue):
                pipe.llen(key)
        lengths = pipe.execute()
    finally:
        client.close()
    per_queue = 1 + len(REDIS_PRIORITY_STEPS)
    return {
        queue: int(sum(lengths[i * per_queue:(i + 1) * per_queue]))
        for i, queue in enumerate(queues)
    }


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

    Read through the Celery app's own connection (its broker URL may differ from the settings'
    in a test that points it elsewhere).
    """
    app = current_app
    if not broker_is_redis(str(app.conf.broker_url or "")):
        return None
    try:
        with app.connection_for_read() as conn:
            client = conn.default_channel.client
            raw = [item for key in queue_keys(queue) for item in client.lrange(key, 0, -1)]
            raw += client.hvals(REDIS_UNACKED_KEY)
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
