"""Spacing E-utilities requests to NCBI's limit: 3 a second without an API key, 10 with one.

NCBI counts requests per client address (or per API key), not per process, so every worker on
a machine must share one budget. ``RedisRateLimiter`` does that with one atomic script that
hands out the next free time slot (Redis's own clock, so hosts with skewed clocks agree);
``LocalRateLimiter`` spaces the requests of one process (its threads included), and is what
the Redis one falls back to when Redis does not answer. No Django here.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

logger = logging.getLogger(__name__)

# A 2 % margin: requests spaced exactly 1/rate apart can put rate + 1 in one clock second.
MARGIN = 1.02
# KEYS[1] = the slot key; ARGV[1] = interval in microseconds, ARGV[2] = key lifetime in ms.
# Returns how many microseconds the caller waits before its request.
_RESERVE = """
local now = redis.call('TIME')
local t = tonumber(now[1]) * 1000000 + tonumber(now[2])
local nxt = tonumber(redis.call('GET', KEYS[1]) or '0')
local slot = math.max(t, nxt)
redis.call('SET', KEYS[1], string.format('%d', slot + tonumber(ARGV[1])), 'PX', ARGV[2])
return slot - t
"""


class RateLimiter(Protocol):
    def wait(self) -> None: ...


class LocalRateLimiter:
    """At most `rate` calls a second from this process."""

    def __init__(self, *, rate: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.interval = MARGIN / rate
        self.clock, self.sleep = clock, sleep
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        with self._lock:
            now = self.clock()
            slot = max(now, self._next)
            self._next = slot + self.interval
        if slot > now:
            self.sleep(slot - now)


class RedisRateLimiter:
    """At most `rate` calls a second from every process that uses the same Redis key."""

    def __init__(self, *, client: Any, key: str, rate: float,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.client, self.key = client, key
        self.interval_us = int(1_000_000 * MARGIN / rate)
        self.sleep = sleep
        self.fallback = LocalRateLimiter(rate=rate, sleep=sleep)
        self._script = client.register_script(_RESERVE)

    def wait(self) -> None:
        try:
            delay_us = int(self._script(keys=[self.key], args=[self.interval_us, 60_000]))
        except Exception as exc:  # redis' ConnectionError, TimeoutError, ResponseError...
            logger.warning("E-utilities rate limit kept per process: Redis did not answer (%s)",
                           exc)
            self.fallback.wait()
            return
        if delay_us > 0:
            self.sleep(delay_us / 1_000_000)
