"""The database, cache and storage settings, built from the environment; settings.py calls these.

Database: DATABASE_URL decides. postgres://user@host:5432/name selects PostgreSQL (or anything
django-environ reads); unset, or sqlite:///path, selects SQLite, so a fresh clone runs with no
service. USE_SQLITE is no longer read: it used to win over DATABASE_URL, so a team that set
DATABASE_URL in .env kept running on SQLite without a word (and each node on its own file). A
leftover USE_SQLITE that contradicts DATABASE_URL stops the app with a message instead.

Cache: one for every process. DRF's throttles (/api/token/) and the failed-login limit per
client address count there. Django's default LocMem cache is per process, so each gunicorn worker
counted on its own and N workers let N times the rate through. Django's built-in RedisCache, on
a Redis DB of its own (default: REDIS_URL's server, the next DB number): cache.clear() empties
the whole DB and must never take the broker's queues with it. Without Redis (start_m1.sh's
filesystem broker) a folder cache, which the processes of one machine share. django-axes keeps
its lockouts in the database (AccessAttempt rows), which every process and node shares already.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import environ
from django.core.exceptions import ImproperlyConfigured

TRUE = ("true", "1", "yes", "on")
FALSE = ("false", "0", "no", "off")


def _sqlite(env: environ.Env, path: Path) -> dict[str, Any]:
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(path),
        "OPTIONS": {
            # The web process reads while the worker and its training child write progress.
            # WAL lets readers and one writer coexist; IMMEDIATE takes the write lock at BEGIN
            # so two writers queue on the busy timeout instead of failing with
            # "database is locked" when a read lock cannot be upgraded.
            "transaction_mode": "IMMEDIATE",
            "timeout": env.int("SQLITE_BUSY_TIMEOUT", default=30),
            "init_command": (
                "PRAGMA journal_mode=WAL;"
                "PRAGMA synchronous=NORMAL;"
                "PRAGMA busy_timeout=30000;"
            ),
        },
    }


def database_settings(env: environ.Env, *, base_dir: Path) -> tuple[dict[str, Any], Path]:
    """(DATABASES, SQLITE_PATH) from DATABASE_URL, SQLITE_PATH and the CONN_* variables."""
    url = env.str("DATABASE_URL", default="")
    use_sqlite = env.str("USE_SQLITE", default="").strip().lower()
    is_sqlite = not url or url.startswith("sqlite:")
    if not is_sqlite and use_sqlite in TRUE:
        raise ImproperlyConfigured(
            "DATABASE_URL and USE_SQLITE=True are both set. DATABASE_URL selects the database "
            "now: remove USE_SQLITE from .env (and the environment), or unset DATABASE_URL for "
            "SQLite."
        )
    if not url and use_sqlite in FALSE:
        raise ImproperlyConfigured(
            "USE_SQLITE=False but DATABASE_URL is not set: set DATABASE_URL=postgres://user@host:"
            "5432/name for PostgreSQL, or remove USE_SQLITE for SQLite."
        )
    sqlite_path = Path(env.path("SQLITE_PATH", default=base_dir / "db.sqlite3"))
    if url.startswith("sqlite:"):
        sqlite_path = Path(env.db_url_config(url)["NAME"])
    if is_sqlite:
        return {"default": _sqlite(env, sqlite_path)}, sqlite_path
    default = env.db_url_config(url)
    default["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
    default["CONN_HEALTH_CHECKS"] = True
    return {"default": default}, sqlite_path


def default_cache_url(*, redis_url: str, broker_url: str, log_dir: Path) -> str:
    if broker_url.startswith("filesystem://"):
        return f"file://{Path(log_dir) / 'cache'}"
    parts = urlsplit(redis_url)
    db = int(parts.path.strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{(db + 1) % 16}"))


def cache_settings(*, url: str, key_prefix: str) -> dict[str, Any]:
    """CACHES from CACHE_URL: redis[s]://, file:///path or locmem:// (one process only)."""
    if url.startswith(("redis://", "rediss://")):
        cache: dict[str, Any] = {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            # A Redis that is down costs a login two seconds (password logins are then refused
            # with a 503, core/loginthrottle.py), never a hang.
            # JSON, never pickle: whoever can write to the Redis must not run code in the web
            # (core/cachejson.py).
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2,
                        "serializer": "core.cachejson.JsonSerializer"},
        }
    elif url.startswith("file://"):
        cache = {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
                 "LOCATION": url[len("file://"):]}
    elif url.startswith("locmem://"):
        # One process only: each gunicorn worker would count on its own again.
        cache = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    else:
        raise ImproperlyConfigured(
            f"CACHE_URL={url!r}: use redis://host:6379/1, file:///path or locmem://."
        )
    # Several installs may share one Redis DB under prefixes of their own.
    return {"default": {**cache, "KEY_PREFIX": key_prefix}}


def storages_settings(env: environ.Env, *, shared_url: str) -> dict[str, Any]:
    """Django's STORAGES: files on this machine's disk, plus "shared" for several machines.

    `shared_url` is SHARED_STORAGE_URL: s3://bucket[/prefix] (django-storages' S3 backend, its
    credentials and endpoint from the AWS_* variables) or file:///path (a shared mount).
    """
    storages: dict[str, Any] = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    if shared_url.startswith("s3://"):
        bucket, _, prefix = shared_url[len("s3://"):].partition("/")
        storages["shared"] = {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": bucket,
                "location": prefix.strip("/"),
                "endpoint_url": env.str("AWS_S3_ENDPOINT_URL", default="") or None,
                "region_name": env.str("AWS_S3_REGION_NAME", default="") or None,
                "access_key": env.str("AWS_ACCESS_KEY_ID", default="") or None,
                "secret_key": env.str("AWS_SECRET_ACCESS_KEY", default="") or None,
                # Keys are content hashes and never-reused paths: the same name is the same bytes.
                "file_overwrite": True,
                "default_acl": None,
                "querystring_auth": False,
            },
        }
    elif shared_url.startswith("file://"):
        storages["shared"] = {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": shared_url[len("file://"):], "allow_overwrite": True},
        }
    elif shared_url:
        raise ImproperlyConfigured(
            f"SHARED_STORAGE_URL={shared_url!r}: use s3://bucket[/prefix] or file:///path."
        )
    return storages
