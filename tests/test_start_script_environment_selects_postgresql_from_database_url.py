"""The environment start_m1.sh gives its processes (scripts/start_env.sh, sourced as start_m1.sh
sources it, in a fresh copy of the project) honours DATABASE_URL: a team that sets it in .env,
or in the shell, runs on PostgreSQL, and the script says which database, the password masked.
Without it, SQLite, and the script says how to switch. A leftover USE_SQLITE=True from an old
.env next to DATABASE_URL stops the app with a message instead of silently choosing SQLite."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.start_script_support import fresh_copy, start_env_then

POSTGRES = "postgres://postgres:s3cret-pw@127.0.0.1:5432/postgres"
# What a management command in the copy sees: the engine it connects to, and how the doctor
# and /readyz name it.
SHOW = (
    "from django.db import connection; connection.ensure_connection(); "
    "from core.backing_services import database_description, database_public; "
    "print(connection.vendor); print(database_description()); print(database_public())"
)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fresh_copy(tmp_path_factory.mktemp("start-env") / "medlitbot")


def manage_shell(code: str) -> str:
    return f'"$PY" manage.py shell -c "{code}"'


def test_database_url_in_the_teams_env_file_selects_postgresql(app: Path) -> None:
    (app / ".env").write_text(
        (app / "env.m1.example").read_text() + f"\nDATABASE_URL={POSTGRES}\n"
    )
    done = start_env_then(app, manage_shell(SHOW))

    assert done.returncode == 0, done.stderr
    vendor, described, public = done.stdout.strip().splitlines()[-3:]
    assert vendor == "postgresql"
    assert described == "postgresql postgres@127.0.0.1:5432/postgres"
    assert public == "{'engine': 'postgresql', 'name': 'postgres'}"
    assert "database: postgres://postgres:***@127.0.0.1:5432/postgres (DATABASE_URL)" in done.stdout
    assert "s3cret-pw" not in done.stdout + done.stderr


def test_database_url_in_the_shell_selects_postgresql_on_a_first_start(app: Path) -> None:
    (app / ".env").unlink(missing_ok=True)
    done = start_env_then(app, manage_shell(SHOW), DATABASE_URL=POSTGRES)

    assert done.returncode == 0, done.stderr
    assert "wrote .env from env.m1.example" in done.stdout
    assert done.stdout.strip().splitlines()[-3] == "postgresql"
    written = (app / ".env").read_text()
    assert "\nUSE_SQLITE" not in written  # the example no longer forces SQLite


def test_without_database_url_it_is_sqlite_and_the_script_says_how_to_switch(app: Path) -> None:
    (app / ".env").unlink(missing_ok=True)
    done = start_env_then(app, manage_shell(SHOW))

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-3] == "sqlite"
    assert "database: SQLite (db.sqlite3); set DATABASE_URL in .env for PostgreSQL" in done.stdout


def test_an_old_env_that_still_says_use_sqlite_stops_with_a_message(app: Path) -> None:
    (app / ".env").write_text(
        (app / "env.m1.example").read_text() + f"\nUSE_SQLITE=True\nDATABASE_URL={POSTGRES}\n"
    )
    done = start_env_then(app, '"$PY" manage.py check')

    assert done.returncode != 0
    assert "DATABASE_URL and USE_SQLITE=True are both set" in done.stderr
