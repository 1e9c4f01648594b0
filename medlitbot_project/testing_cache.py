"""The test suite's cache: Django's RedisCache, whose clear() removes only this run's keys.

RedisCache.clear() empties the whole Redis DB. Several test runs share one machine (and DB);
the tests that clear the cache between themselves (the throttle counts) must not wipe another
run's counts in the middle of its test. Each run has a KEY_PREFIX of its own (settings_test).
"""

from __future__ import annotations

from django.core.cache.backends.redis import RedisCache


class RunScopedRedisCache(RedisCache):
    def clear(self) -> bool:
        client = self._cache.get_client(None, write=True)
        # Keys are "<KEY_PREFIX>:<version>:<key>"; the prefix is a folder name (no glob chars).
        keys = list(client.scan_iter(match=f"{self.key_prefix}:*", count=1000))
        for start in range(0, len(keys), 500):
            client.delete(*keys[start:start + 500])
        return True
