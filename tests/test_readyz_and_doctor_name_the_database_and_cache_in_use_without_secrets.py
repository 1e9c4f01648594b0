"""/readyz and the doctor name the database in use, so a node that meant the team's PostgreSQL
but runs on its own SQLite file is seen at once: /readyz (no login) the engine and the
database's name only, the doctor the user, host, port and name too; never the password (the
PostgreSQL lines are checked against a real server through start_m1.sh's environment, in
test_start_script_environment_selects_postgresql_from_database_url.py). /readyz also checks the
shared cache with a round trip and names its kind."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client

from classification import doctor
from core import backing_services

pytestmark = pytest.mark.django_db


def test_readyz_names_the_engine_and_the_database_but_no_path(settings) -> None:
    body = Client().get("/readyz").json()

    assert body["database"]["engine"] == connection.vendor
    name = str(settings.DATABASES["default"]["NAME"])
    if connection.vendor == "sqlite":
        assert body["database"]["name"] == name.rsplit("/", 1)[-1]
        assert name not in Client().get("/readyz").content.decode()
    assert body["cache"] == "redis"
    assert body["checks"]["cache"] == {"ok": True}


def test_the_doctor_database_line_names_the_database_it_reached(settings) -> None:
    line = next(c for c in doctor.check_services() if c.name == "database")
    assert line.status == doctor.OK
    assert line.detail == f"{backing_services.database_description()} reachable"


def test_the_doctor_warns_when_nodes_share_files_but_each_has_its_own_sqlite(settings,
                                                                             tmp_path) -> None:
    if connection.vendor != "sqlite":
        pytest.skip("the suite runs on PostgreSQL")
    settings.SHARED_STORAGE_URL = f"file://{tmp_path}"
    line = next(c for c in doctor.check_services() if c.name == "database")
    assert line.status == doctor.WARN
    assert "every node has its own SQLite file; set DATABASE_URL" in line.detail


def test_a_cache_that_cannot_be_reached_fails_readyz(settings) -> None:
    # Nothing listens on port 1. Changing CACHES makes Django open the new cache.
    settings.CACHES = {"default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0", "OPTIONS": {"socket_connect_timeout": 0.5}}}
    body = Client().get("/readyz").json()
    assert "cache" in body["failing"]
    assert body["checks"]["cache"]["error"] == "cache unreachable (ConnectionError)"
