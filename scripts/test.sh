#!/usr/bin/env bash
# The test command from the README: sets up .venv with the dev tools if needed, then runs lint,
# Django's checks, the whole suite on SQLite, and the suite again on PostgreSQL.
#   scripts/test.sh              everything
#   scripts/test.sh tests/x.py   pytest arguments are passed through (SQLite only)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
VENV=.venv
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
STAMP="$VENV/.requirements-dev.sha256"
WANT="$(cat requirements.txt requirements-dev.txt | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    "$VENV/bin/python" -m pip install --quiet -r requirements-dev.txt
    echo "$WANT" > "$STAMP"
fi
PY="$VENV/bin/python"
export TOKENIZERS_PARALLELISM=false

if [ "$#" -gt 0 ]; then
    exec "$PY" -m pytest "$@"
fi

"$VENV/bin/ruff" check .
DJANGO_SETTINGS_MODULE=medlitbot_project.settings_test "$PY" manage.py check
DJANGO_SETTINGS_MODULE=medlitbot_project.settings_test "$PY" manage.py makemigrations --check --dry-run

echo "== suite on SQLite"
DATABASE_URL= "$PY" -m pytest -q

echo "== suite on PostgreSQL (browser tests ran above)"
DATABASE_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/medlitbot}" \
    "$PY" -m pytest -q -m "not browser"
