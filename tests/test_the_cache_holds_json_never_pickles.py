"""The Django cache in Redis holds JSON, never pickles: whoever can write to that Redis must not
run code in the web. A value is stored as JSON text (ints as plain integers, so incr() stays
atomic), and a pickle planted under a key reads as a miss and is never unpickled."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from django.core.cache import cache

pytestmark = pytest.mark.skipif(
    not type(cache._cache).__module__.startswith("django.core.cache.backends.redis"),
    reason="the suite's cache is not Redis")


class Planted:
    """What an attacker would write: unpickling it creates a file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (self.path,))


def raw(key: str) -> bytes:
    return cache._cache.get_client(key).get(cache.make_and_validate_key(key))


def test_values_are_stored_as_json_and_come_back_the_same() -> None:
    value = {"history": [1700000000.25, 1700000001.5], "name": "tëst", "ok": True}
    cache.set("h1-json", value, 60)
    assert raw("h1-json") == b'{"history":[1700000000.25,1700000001.5],"name":"t\\u00ebst",' \
                             b'"ok":true}'
    assert cache.get("h1-json") == value
    cache.set("h1-count", 0, 60)
    assert cache.incr("h1-count") == 1
    assert raw("h1-count") == b"1"
    assert cache.get("h1-flag") is None
    cache.set("h1-flag", True, 60)
    assert cache.get("h1-flag") is True
    cache.delete_many(["h1-json", "h1-count", "h1-flag"])


def test_a_planted_pickle_is_never_unpickled(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    key = "h1-planted"
    cache._cache.get_client(key, write=True).set(
        cache.make_and_validate_key(key), pickle.dumps(Planted(marker)))
    assert cache.get(key) is None
    assert cache.get_many([key]) == {key: None}
    assert not marker.exists()
    cache.delete(key)
