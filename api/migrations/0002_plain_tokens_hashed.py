"""DRF's plain tokens (rest_framework.authtoken) become hashed ApiTokens, and their table goes.

Each old key keeps working, as "Migrated token", for API_TOKEN_DAYS from this migration; then
the 401 says it expired and where to make a new one. Only the key's SHA-256 and first eight
characters are kept. The app is no longer installed, so its table is read with plain SQL where
it exists (an install made before this change) and skipped where it does not (a new one), and
its rows in django_migrations go with the table, so adding the app back would start afresh.

Not reversible in substance: a plain key cannot be got back from its hash.
"""

import hashlib
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import migrations
from django.db.migrations.recorder import MigrationRecorder
from django.utils import timezone
from django.utils.dateparse import parse_datetime

OLD_TABLE = "authtoken_token"
MIGRATED_NAME = "Migrated token"


def _moment(value, default):
    if isinstance(value, str):
        value = parse_datetime(value)
    if not isinstance(value, datetime):
        return default
    return timezone.make_aware(value, UTC) if timezone.is_naive(value) else value


def plain_tokens_hash(apps, schema_editor):
    connection = schema_editor.connection
    if OLD_TABLE not in connection.introspection.table_names():
        return
    q = schema_editor.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {q('key')}, {q('user_id')}, {q('created')} FROM {q(OLD_TABLE)}")
        rows = cursor.fetchall()
    ApiToken = apps.get_model("api", "ApiToken")
    now = timezone.now()
    expires_at = now + timedelta(days=settings.API_TOKEN_DAYS)
    ApiToken.objects.bulk_create([
        ApiToken(user_id=user_id, name=MIGRATED_NAME, key_prefix=key[:8],
                 key_hash=hashlib.sha256(key.encode()).hexdigest(),
                 created_at=_moment(created, now), expires_at=expires_at)
        for key, user_id, created in rows
    ])
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {q(OLD_TABLE)}")
    schema_editor.execute(f"DROP TABLE {q(OLD_TABLE)}")
    MigrationRecorder(connection).migration_qs.filter(app="authtoken").delete()


class Migration(migrations.Migration):

    dependencies = [
        ("api", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(plain_tokens_hash, migrations.RunPython.noop),
    ]
