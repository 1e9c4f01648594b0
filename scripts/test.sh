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
# Two lanes share the cores. The serial group's tests measure time and memory against the whole
# machine, and alone they keep one of two cores busy; so it runs at normal priority while the
# parallel SQLite suite, and after the serial group the PostgreSQL set, run at nice 15 beside it
# and take only the CPU it leaves (a niced task yields to it within a scheduler tick).
# TEST_SEQUENTIAL=1 runs the three phases one after another instead, each alone.
LOGS="$(mktemp -d)"
run_phase() {  # run_phase NAME LOG CMD...: runs CMD with its output in LOG, records its times
    local name="$1" log="$2" t0=$SECONDS rc=0
    shift 2
    "$@" > "$log" 2>&1 || rc=$?
    echo "$name|$t0|$SECONDS|$rc|$log" >> "$LOGS/phases"
    printf '== phase %-28s ended after %5d s, exit %d\n' "$name" $((SECONDS - t0)) "$rc"
}
BESIDE=(nice -n 15)
[ "${TEST_SEQUENTIAL:-0}" = "1" ] && BESIDE=()
lane_parallel() {
    run_phase "SQLite, $WORKERS in parallel" "$LOGS/sqlite-parallel.log" "${BESIDE[@]}" \
        env DATABASE_URL= "$PY" -m pytest -q -n "$WORKERS" --dist worksteal -m "not serial" \
        --durations=30
}
lane_serial_then_postgres() {
    run_phase "SQLite, the serial group" "$LOGS/sqlite-serial.log" \
        env DATABASE_URL= "$PY" -m pytest -q -m serial --durations=10
    run_phase "PostgreSQL set, in parallel" "$LOGS/postgres.log" "${BESIDE[@]}" \
        env DATABASE_URL="$PG_URL" "$PY" -m pytest -q -n "$WORKERS" --dist worksteal \
        -m "pg and not serial and not browser" --durations=10
}
phase "the suites"
if [ "${#BESIDE[@]}" -eq 0 ]; then
    lane_parallel
    lane_serial_then_postgres
else
    lane_parallel &
    LANE=$!
    lane_serial_then_postgres
    wait "$LANE"
fi

FAILED=()
while IFS='|' read -r name t0 t1 rc log; do
    echo "== output of $name"
    cat "$log"
    [ "$rc" = "0" ] || FAILED+=("$name")
done < "$LOGS/phases"
while IFS='|' read -r name t0 t1 rc log; do
    printf '== phase %-28s %5d s   (from %d s to %d s)\n' "$name" $((t1 - t0)) \
        $((t0 - START)) $((t1 - START))
done < "$LOGS/phases"
phase "end"
if [ "${#FAILED[@]}" -gt 0 ]; then
    echo "== failed: ${FAILED[*]}"
    exit 1
fi
echo "== every suite passed"
