"""NCBI counts requests per address (or API key), not per process: two processes sharing the
Redis limiter together stay at the rate (here 10 a second, the API-key rate), where each on its
own would send its calls back to back."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import redis
from django.conf import settings

from literature.ratelimit import LocalRateLimiter

ROOT = Path(__file__).resolve().parent.parent
CALLER = """
import sys, time, redis
from literature.ratelimit import RedisRateLimiter
limiter = RedisRateLimiter(client=redis.Redis.from_url(sys.argv[1]), key=sys.argv[2], rate=10)
for _ in range(8):
    limiter.wait()
    print(time.time(), flush=True)
"""


def _most_in_any_second(times: list[float]) -> int:
    times = sorted(times)
    return max(sum(1 for t in times if start <= t < start + 1.0) for start in times)


def test_two_processes_share_one_budget() -> None:
    key = f"{settings.CACHES['default'].get('KEY_PREFIX') or 'h6'}:eutils:test:{os.getpid()}"
    redis.Redis.from_url(settings.CACHE_URL).delete(key)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", CALLER, settings.CACHE_URL, key],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env)
             for _ in range(2)]
    times = [float(line) for proc in procs for line in proc.communicate(timeout=60)[0].split()]
    assert all(proc.returncode == 0 for proc in procs)
    assert len(times) == 16
    # Grants are 1.02 / 10 s apart, whichever process asked. A stamp is taken after its grant,
    # so on a loaded machine a process descheduled in between shifts one stamp later, into the
    # next second's ten (seen: 11 in one second once) and up to the next stamp (gaps of 0.089
    # and 0.012 s seen), so no single gap is asserted. Delays never shorten the whole: sixteen
    # calls span at least fifteen intervals, less the first stamp's own delay.
    assert _most_in_any_second(times) <= 11
    assert max(times) - min(times) >= 15 * 0.102 - 0.15
    gaps = [b - a for a, b in zip(sorted(times), sorted(times)[1:], strict=False)]
    assert sorted(gaps)[len(gaps) // 2] >= 0.095  # most calls sit at the granted spacing


def test_without_redis_one_process_keeps_the_rate_itself() -> None:
    limiter = LocalRateLimiter(rate=3)
    import time

    stamps = []
    for _ in range(4):
        limiter.wait()
        stamps.append(time.monotonic())
    assert stamps[-1] - stamps[0] >= 3 * 1.02 / 3 - 0.01
