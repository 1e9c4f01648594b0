"""The Redis cache's serializer: JSON, never pickle.

Django's RedisCache pickles every value that is not an int, and unpickling runs whatever the
bytes say: anyone who can write to the Redis (no password by default, often shared) could have
every web process run code. What MedLitBot caches is all JSON already (login-failure counts and
times, lock deadlines, DRF's throttle histories of timestamps, a test set's SHA-256), so values
are stored as JSON text. Ints stay plain integers, as Django's serializer keeps them, so
incr() stays atomic in Redis. A value that is not JSON (a pickle planted by someone, or left by
an older MedLitBot) reads as a miss, never as code.
"""

from __future__ import annotations

import json
import logging
from typing import Any

logger = logging.getLogger(__name__)


class JsonSerializer:
    def dumps(self, obj: Any) -> int | bytes:
        if type(obj) is int:  # not bool: True must come back as True
            return obj
        return json.dumps(obj, separators=(",", ":")).encode()

    def loads(self, data: bytes | int) -> Any:
        try:
            return int(data)
        except ValueError:
            pass
        try:
            return json.loads(data)
        except (ValueError, UnicodeDecodeError):
            logger.warning("a cache value that is not JSON was ignored (%d bytes)", len(data))
            return None
