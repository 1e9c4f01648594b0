"""Production settings give every process one cache, Django's built-in RedisCache, on a Redis
DB of its own next to the broker's (clearing it must never empty the broker's queues); with
start_m1.sh's filesystem broker a folder cache that the processes of one machine share; and a
CACHE_URL it cannot use stops the app with a message."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRINT_CACHE = (
    "import json; from django.conf import settings; "
    "print(json.dumps(settings.CACHES['default'], default=str))"
)
OURS = ("CACHE_URL", "CACHE_KEY_PREFIX", "REDIS_URL", "CELERY_BROKER_URL", "DATABASE_URL",
        "USE_SQLITE")


def production_settings(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in OURS}
    clean.update(DJANGO_SETTINGS_MODULE="medlitbot_project.settings", **env)
    return subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60,
    )


def test_the_default_cache_is_django_rediscache_on_the_db_after_the_brokers() -> None:
    done = production_settings(PRINT_CACHE, REDIS_URL="redis://:pw@redis.internal:6380/0")
    cache = json.loads(done.stdout)
    assert cache["BACKEND"] == "django.core.cache.backends.redis.RedisCache"
    assert cache["LOCATION"] == "redis://:pw@redis.internal:6380/1"
    assert cache["KEY_PREFIX"] == "medlitbot"


def test_cache_url_and_prefix_are_taken_as_given() -> None:
    done = production_settings(PRINT_CACHE, CACHE_URL="redis://127.0.0.1:6379/5",
                               CACHE_KEY_PREFIX="site-b")
    cache = json.loads(done.stdout)
    assert cache["BACKEND"] == "django.core.cache.backends.redis.RedisCache"
    assert (cache["LOCATION"], cache["KEY_PREFIX"]) == ("redis://127.0.0.1:6379/5", "site-b")


def test_with_the_filesystem_broker_the_processes_share_a_folder_cache(tmp_path: Path) -> None:
    done = production_settings(PRINT_CACHE, CELERY_BROKER_URL="filesystem://",
                               LOG_DIR=str(tmp_path))
    cache = json.loads(done.stdout)
    assert cache["BACKEND"] == "django.core.cache.backends.filebased.FileBasedCache"
    assert cache["LOCATION"] == str(tmp_path / "cache")


def test_a_cache_url_it_cannot_use_stops_the_app_saying_which_work() -> None:
    done = production_settings("print('started')", CACHE_URL="memcached://127.0.0.1:11211")
    assert done.returncode != 0
    assert "use redis://host:6379/1, file:///path or locmem://" in done.stderr


def test_a_value_one_process_writes_another_process_reads() -> None:
    key = f"shared-check-{os.getpid()}"
    written = production_settings(
        f"from django.core.cache import cache; cache.set('{key}', 41, 30); print('ok')",
        CACHE_URL="redis://127.0.0.1:6379/11", CACHE_KEY_PREFIX="settings-test")
    assert written.stdout.strip() == "ok", written.stderr
    read = production_settings(
        f"from django.core.cache import cache; print(cache.incr('{key}')); cache.delete('{key}')",
        CACHE_URL="redis://127.0.0.1:6379/11", CACHE_KEY_PREFIX="settings-test")
    assert read.stdout.strip() == "42", read.stderr
