"""The database and the cache this process uses, described without secrets, for /readyz and the
doctor; and a round trip through the cache for /readyz.

A deployment that meant PostgreSQL but runs on SQLite (each node on its own file) must be seen
at a glance, so both name the engine. /readyz answers anyone, so it names only the engine and
the database's name (a SQLite file's name, not its folder); the doctor, run by the operator,
adds the user, host and port. The password never appears.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection

logger = logging.getLogger(__name__)


def database_public() -> dict[str, str]:
    """{"engine": "postgresql", "name": "medlitbot"}: safe for an answer without login."""
    db = settings.DATABASES["default"]
    name = str(db.get("NAME") or "")
    if connection.vendor == "sqlite":
        name = Path(name).name
    return {"engine": connection.vendor, "name": name}


def database_description() -> str:
    """"postgresql medlitbot@db.internal:5432/medlitbot" or "sqlite /srv/medlitbot/db.sqlite3"."""
    db: dict[str, Any] = settings.DATABASES["default"]
    if connection.vendor == "sqlite":
        return f"sqlite {db.get('NAME')}"
    user = f"{db['USER']}@" if db.get("USER") else ""
    host = db.get("HOST") or "localhost (socket)"
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"{connection.vendor} {user}{host}{port}/{db.get('NAME')}"


def cache_public() -> str:
    """The cache's kind: "redis", "file" or "locmem" (its URL may hold a password)."""
    backend = settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1].lower()
    for kind in ("redis", "file", "locmem"):
        if kind in backend:
            return kind
    return backend


def cache_check() -> str:
    """'' when a value written to the cache reads back, else what failed (kind only)."""
    from django.core.cache import cache

    key = f"readyz:{uuid.uuid4().hex}"
    try:
        cache.set(key, 1, timeout=10)
        found = cache.get(key)
        cache.delete(key)
    except Exception as exc:
        logger.warning("readiness: cache check failed: %s", exc)
        return f"cache unreachable ({type(exc).__name__})"
    return "" if found == 1 else "cache did not keep a value"
