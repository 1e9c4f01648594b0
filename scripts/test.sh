#!/usr/bin/env bash
# The test command from the README: sets up .venv with the dev tools if needed, then runs lint,
# Django's checks, the whole suite on SQLite (in parallel, then the serial group alone), and the
# PostgreSQL set (tests/suite_sets.py) on PostgreSQL. Each phase prints its time.
#   scripts/test.sh              everything
#   scripts/test.sh tests/x.py   pytest arguments are passed through (SQLite; add -n 2 to spread)
# TEST_WORKERS sets the number of parallel pytest workers (default: cores + 1, at least 2: the
# suite waits on subprocesses, sockets and sleeps as much as it computes).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
VENV=.venv
START=$SECONDS
phase_start=$SECONDS
phase() {  # phase NAME: prints the previous phase's time and starts a new one
    local now=$SECONDS
    if [ -n "${PHASE:-}" ]; then
        printf '== phase %-28s %5d s   (total %d s)\n' "$PHASE" $((now - phase_start)) $((now - START))
    fi
    PHASE="$1"
    phase_start=$now
    [ "$1" = "end" ] || echo "== $1"
}

phase "virtualenv"
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

CORES="$(nproc 2>/dev/null || echo 2)"
WORKERS="${TEST_WORKERS:-$((CORES + 1))}"
[ "$WORKERS" -ge 2 ] || WORKERS=2
PG_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/medlitbot}"

phase "lint and checks"
"$VENV/bin/ruff" check .
DJANGO_SETTINGS_MODULE=medlitbot_project.settings_test "$PY" manage.py check
DJANGO_SETTINGS_MODULE=medlitbot_project.settings_test "$PY" manage.py makemigrations --check --dry-run

# Every suite runs even when an earlier one failed, so one run reports every failure.
FAILED=()
phase "SQLite, $WORKERS in parallel"
DATABASE_URL= "$PY" -m pytest -q -n "$WORKERS" --dist worksteal -m "not serial" --durations=30 \
    || FAILED+=("SQLite in parallel")

phase "SQLite, the serial group"
DATABASE_URL= "$PY" -m pytest -q -m serial --durations=10 || FAILED+=("SQLite serial")

phase "PostgreSQL set, in parallel"
DATABASE_URL="$PG_URL" "$PY" -m pytest -q -n "$WORKERS" --dist worksteal \
    -m "pg and not serial and not browser" --durations=10 || FAILED+=("PostgreSQL in parallel")

phase "end"
if [ "${#FAILED[@]}" -gt 0 ]; then
    echo "== failed: ${FAILED[*]}"
    exit 1
fi
echo "== every suite passed"
