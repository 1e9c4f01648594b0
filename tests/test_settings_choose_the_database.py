"""The settings module picks SQLite (WAL, IMMEDIATE) by default and PostgreSQL from DATABASE_URL,
which nothing overrides: a leftover USE_SQLITE that contradicts it stops the app with a message."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRINT_DB = (
    "import json; from django.conf import settings; "
    "print(json.dumps(settings.DATABASES['default'], default=str))"
)


def _settings_in_subprocess(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "USE_SQLITE")}
    clean.update(DJANGO_SETTINGS_MODULE="medlitbot_project.settings", **env)
    return subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60,
    )


def test_sqlite_is_the_default_and_runs_in_wal_mode_with_immediate_transactions() -> None:
    done = _settings_in_subprocess(PRINT_DB, SQLITE_PATH="/tmp/medlitbot-settings-test.sqlite3")
    db = json.loads(done.stdout)
    assert db["ENGINE"] == "django.db.backends.sqlite3"
    assert db["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert "journal_mode=WAL" in db["OPTIONS"]["init_command"]
    assert db["OPTIONS"]["timeout"] >= 5


def test_database_url_switches_to_postgresql() -> None:
    done = _settings_in_subprocess(
        PRINT_DB, DATABASE_URL="postgres://postgres@127.0.0.1:5432/medlitbot_settings_check"
    )
    db = json.loads(done.stdout)
    assert db["ENGINE"] == "django.db.backends.postgresql"
    assert db["NAME"] == "medlitbot_settings_check"
    assert db["HOST"] == "127.0.0.1"


def test_the_postgresql_settings_really_connect() -> None:
    code = (
        "from django.db import connection; connection.ensure_connection(); "
        "print(connection.vendor)"
    )
    done = _settings_in_subprocess(code, DATABASE_URL="postgres://postgres@127.0.0.1:5432/postgres")
    assert done.stdout.strip() == "postgresql", done.stderr


def test_a_leftover_use_sqlite_true_beside_a_database_url_stops_the_app_saying_why() -> None:
    # An .env copied from the old env.m1.example says USE_SQLITE=True; it used to win, silently.
    done = _settings_in_subprocess(
        PRINT_DB, DATABASE_URL="postgres://postgres@127.0.0.1:5432/x", USE_SQLITE="True"
    )
    assert done.returncode != 0
    assert "DATABASE_URL and USE_SQLITE=True are both set" in done.stderr
    assert "remove USE_SQLITE" in done.stderr


def test_use_sqlite_false_without_a_database_url_stops_the_app_saying_why() -> None:
    done = _settings_in_subprocess(PRINT_DB, USE_SQLITE="False")
    assert done.returncode != 0
    assert "USE_SQLITE=False but DATABASE_URL is not set" in done.stderr


def test_use_sqlite_false_beside_a_database_url_is_postgresql() -> None:
    done = _settings_in_subprocess(
        PRINT_DB, DATABASE_URL="postgres://postgres@127.0.0.1:5432/x", USE_SQLITE="False"
    )
    assert json.loads(done.stdout)["ENGINE"] == "django.db.backends.postgresql", done.stderr


def test_a_sqlite_database_url_runs_in_wal_mode_at_that_path() -> None:
    done = _settings_in_subprocess(
        PRINT_DB, DATABASE_URL="sqlite:////tmp/medlitbot-settings-url.sqlite3"
    )
    db = json.loads(done.stdout)
    assert db["ENGINE"] == "django.db.backends.sqlite3"
    assert db["NAME"] == "/tmp/medlitbot-settings-url.sqlite3"
    assert "journal_mode=WAL" in db["OPTIONS"]["init_command"]


def test_production_refuses_to_start_with_the_default_secret_key() -> None:
    done = _settings_in_subprocess("print('started')", DEBUG="False", SECRET_KEY="")
    assert done.returncode != 0
    assert "SECRET_KEY is missing or still the development default" in done.stderr


def test_debug_is_off_unless_asked_for() -> None:
    code = "from django.conf import settings; print(settings.DEBUG)"
    done = _settings_in_subprocess(code, SECRET_KEY="a-real-secret-" * 4)
    assert done.stdout.split() == ["False"], done.stderr


def test_plain_http_on_localhost_keeps_cookies_that_the_browser_sends_back() -> None:
    code = (
        "from django.conf import settings; "
        "print(settings.SESSION_COOKIE_SECURE, settings.SECURE_SSL_REDIRECT, "
        "settings.SECURE_HSTS_SECONDS)"
    )
    done = _settings_in_subprocess(code, DEBUG="False", SECRET_KEY="a-real-secret-" * 4)
    assert done.stdout.split() == ["False", "False", "0"], done.stderr


def test_behind_tls_cookies_are_secure_http_redirects_and_hsts_is_sent() -> None:
    code = (
        "from django.conf import settings; "
        "print(settings.SESSION_COOKIE_SECURE, settings.CSRF_COOKIE_SECURE, "
        "settings.SECURE_SSL_REDIRECT, settings.SECURE_HSTS_SECONDS, "
        "settings.SECURE_PROXY_SSL_HEADER[0])"
    )
    done = _settings_in_subprocess(code, DEBUG="False", SECRET_KEY="a-real-secret-" * 4,
                                   HTTPS="True")
    assert done.stdout.split() == ["True", "True", "True", "31536000",
                                   "HTTP_X_FORWARDED_PROTO"], done.stderr
