"""An install from before hashed tokens has DRF's plain ``authtoken_token`` rows. The migration
(api/migrations/0002) turns each into a hashed "Migrated token" that still works for
API_TOKEN_DAYS, deletes the plain rows with their table, and forgets authtoken's migrations.
A new install has no such table, and the migration does nothing."""

from __future__ import annotations

import importlib
from datetime import timedelta

import pytest
from django.apps import apps
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder
from django.utils import timezone
from rest_framework.test import APIClient

from api.models import ApiToken

MIGRATION = importlib.import_module("api.migrations.0002_plain_tokens_hashed")
OLD_KEY = "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b"  # the shape of a DRF key: 40 hex digits


def old_table_make(user_id: int) -> None:
    """authtoken_token as rest_framework.authtoken's migrations left it, with one plain key."""
    with connection.cursor() as cursor:
        cursor.execute('CREATE TABLE "authtoken_token" ("key" varchar(40) NOT NULL PRIMARY KEY, '
                       '"created" timestamp NOT NULL, "user_id" integer NOT NULL UNIQUE)')
        cursor.execute('INSERT INTO "authtoken_token" VALUES (%s, %s, %s)',
                       [OLD_KEY, "2024-03-01 09:30:00", user_id])
    MigrationRecorder(connection).record_applied("authtoken", "0004_alter_tokenproxy_options")


def migrate() -> None:
    with connection.schema_editor() as editor:
        MIGRATION.plain_tokens_hash(apps, editor)


@pytest.mark.django_db(transaction=True)
def test_a_plain_token_becomes_a_hashed_expiring_one_and_keeps_working(user) -> None:
    old_table_make(user.pk)
    migrate()

    token = ApiToken.objects.get()
    assert (token.user_id, token.name, token.key_prefix) == (user.pk, "Migrated token",
                                                             OLD_KEY[:8])
    assert token.created_at.isoformat() == "2024-03-01T09:30:00+00:00"
    assert timedelta(days=29, hours=23) < token.expires_at - timezone.now() <= timedelta(days=30)
    assert "authtoken_token" not in connection.introspection.table_names()
    assert not MigrationRecorder(connection).migration_qs.filter(app="authtoken").exists()
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f'SELECT * FROM "{table}"')
            assert OLD_KEY not in repr(cursor.fetchall()), table

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {OLD_KEY}")
    assert client.get("/api/datasets/").status_code == 200
    listed = client.get("/api/tokens/").json()["results"]
    assert [(row["name"], row["prefix"]) for row in listed] == [("Migrated token", OLD_KEY[:8])]


@pytest.mark.django_db(transaction=True)
def test_a_migrated_token_past_its_days_says_it_expired(user) -> None:
    old_table_make(user.pk)
    migrate()
    ApiToken.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {OLD_KEY}")
    response = client.get("/api/datasets/")
    assert response.status_code == 401
    assert "This token (“Migrated token”) expired on " in response.json()["detail"]


@pytest.mark.django_db(transaction=True)
def test_a_new_install_has_nothing_to_migrate(user) -> None:
    migrate()
    assert not ApiToken.objects.exists()
