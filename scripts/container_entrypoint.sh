#!/usr/bin/env bash
# The image's entrypoint (Containerfile): the first argument chooses the role, each started the
# way start_m1.sh starts that process.
#
#   web                 gunicorn (medlitbot_project/gunicorn_conf.py) on 0.0.0.0:$PORT
#   worker-training     the solo training worker (queue training)
#   worker-inference    the threads worker for batches, imports, evaluations, maintenance
#                       (queues inference and default)
#   worker-training-gpu the solo worker on training.gpu (give the container one GPU)
#   beat                celery beat; run exactly one per installation
#   all                 the default: web, both workers and beat in this one container, each
#                       restarted if it stops (scripts/supervise.sh); the whole app in one
#                       `podman run`. Only one such container per installation (beat).
#   migrate             manage.py migrate, then exit: run it before web after every upgrade
#   manage ARGS...      manage.py ARGS (createsuperuser, setup_demo, doctor, ping_worker ...)
#   healthcheck         what the image's HEALTHCHECK runs, for the role this container runs
#   anything else       run as given (bash, python ...)
#
# Without DATABASE_URL every process uses SQLite in /data; without REDIS_URL or
# CELERY_BROKER_URL the broker is kombu's filesystem transport in /data/broker. So one container
# (`podman run -e PORT=8000 IMAGE`, role all) migrates its SQLite database, serves the app and
# trains; the web role alone serves pages but trains nothing (it says so when it starts). A
# team's deployment sets both (compose.yaml). Without SECRET_KEY a random one is made once and
# kept in /data/secret_key, so the sessions survive a restart; several containers need the same
# key, so set SECRET_KEY for them.
#
# With DATABASE_URL or REDIS_URL set, every long-running role first waits (SERVICE_WAIT_SECONDS,
# 120) until PostgreSQL and Redis accept connections, and web, the workers and beat wait
# (MIGRATE_WAIT_SECONDS, 600) until the migrate role has applied every migration: podman-compose
# 1.0 with podman 4.3 starts them without waiting for compose.yaml's conditions.
set -euo pipefail

ROLE="${1:-all}"
if [ "$#" -gt 0 ]; then shift; fi
SELF="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$0")/.."  # /app in the image

say() { printf '[medlitbot %s] %s\n' "$ROLE" "$*" >&2; }

if [ "$ROLE" = "healthcheck" ]; then
    ROLE="$(cat /tmp/medlitbot-role 2>/dev/null || echo none)"
    case "$ROLE" in
        web)
            exec python -c "import os, urllib.request; urllib.request.urlopen(
'http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '8000'), timeout=5)" ;;
        # Healthy while a live worker serves its queues (heartbeat rows, core.heartbeat).
        worker-training) exec python manage.py ping_worker --queue training ;;
        worker-training-gpu) exec python manage.py ping_worker --queue training.gpu ;;
        worker-inference) exec python manage.py ping_worker --queue inference --queue default ;;
        all) exec python -c "import os, urllib.request; urllib.request.urlopen(
'http://127.0.0.1:%s/readyz' % os.environ.get('PORT', '8000'), timeout=20)" ;;
        *) exit 0 ;;  # beat, migrate, manage: alive while their process runs
    esac
fi

# --- state: every folder under /data (one volume) -----------------------------------------------
for dir in "$MEDIA_ROOT" "$MODEL_ARTIFACT_ROOT" "$FILE_CACHE_DIR" "$MEDLITBOT_MODEL_DIR" \
           "$LOG_DIR" "$HF_HOME"; do
    if ! mkdir -p "$dir" 2>/dev/null || [ ! -w "$dir" ]; then
        say "cannot write $dir: the volume must be writable by uid $(id -u) (medlitbot)"
        exit 1
    fi
done

if [ -z "${SECRET_KEY:-}" ]; then
    KEY_FILE="${SECRET_KEY_FILE:-/data/secret_key}"
    if [ ! -s "$KEY_FILE" ]; then
        (umask 077 && python -c 'import secrets; print(secrets.token_urlsafe(50))' > "$KEY_FILE")
        say "no SECRET_KEY set: made one in $KEY_FILE (set SECRET_KEY when several containers share the app)"
    fi
    SECRET_KEY="$(cat "$KEY_FILE")"
    export SECRET_KEY
fi

if [ -z "${CELERY_BROKER_URL:-}" ] && [ -z "${REDIS_URL:-}" ]; then
    export CELERY_BROKER_URL="filesystem://"
    mkdir -p "$CELERY_FILESYSTEM_BROKER_DIR/processed"
    say "no REDIS_URL: kombu's filesystem broker in $CELERY_FILESYSTEM_BROKER_DIR (one machine only)"
fi
if [ -z "${DATABASE_URL:-}" ]; then
    say "no DATABASE_URL: SQLite in ${SQLITE_PATH}"
fi

# What the HEALTHCHECK reads; only the long-running roles write it, so `podman exec ...
# manage ...` in a running container leaves its role as it was (nor do the roles `all` runs).
case "$ROLE" in
    web | worker-* | beat | all)
        if [ -z "${MEDLITBOT_SUPERVISED:-}" ]; then echo "$ROLE" > /tmp/medlitbot-role; fi ;;
esac

# A service named by a URL accepts connections, within SERVICE_WAIT_SECONDS; else a message
# naming it (never the URL: it carries the password) and exit 1.
wait_for_service() {  # NAME URL DEFAULT_PORT
    python - "$1" "$2" "$3" "${SERVICE_WAIT_SECONDS:-120}" <<'PY'
import socket, sys, time
from urllib.parse import urlsplit

name, url, default_port, limit = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
parts = urlsplit(url)
where = (parts.hostname or "127.0.0.1", parts.port or default_port)
deadline, said = time.monotonic() + limit, False
while True:
    try:
        socket.create_connection(where, timeout=3).close()
        break
    except OSError as exc:
        if time.monotonic() > deadline:
            sys.exit(f"[medlitbot] {name} at {where[0]}:{where[1]} did not accept a connection "
                     f"in {limit:g} s ({exc}); is its container running? (SERVICE_WAIT_SECONDS)")
        if not said:
            print(f"[medlitbot] waiting for {name} at {where[0]}:{where[1]} ...", file=sys.stderr)
            said = True
        time.sleep(1)
PY
}
case "$ROLE" in
    web | worker-* | beat | all | migrate)
        case "${DATABASE_URL:-}" in
            postgres://* | postgresql://* | pgsql://*)
                wait_for_service PostgreSQL "$DATABASE_URL" 5432 ;;
        esac
        case "${CELERY_BROKER_URL:-${REDIS_URL:-}}" in
            redis://* | rediss://*) wait_for_service Redis "${CELERY_BROKER_URL:-$REDIS_URL}" 6379 ;;
        esac ;;
esac
# With a shared database the migrate role migrates: the others start once it has.
if [ -n "${DATABASE_URL:-}" ] && [ -z "${MEDLITBOT_SUPERVISED:-}" ]; then
    case "$ROLE" in
        web | worker-* | beat)
            waited=0
            until python manage.py migrate --check >/dev/null 2>&1; do
                if [ "$waited" -ge "${MIGRATE_WAIT_SECONDS:-600}" ]; then
                    say "the database still has unapplied migrations after ${waited} s: run the migrate role (compose: docker compose run --rm migrate)"
                    exit 1
                fi
                if [ "$waited" -eq 0 ]; then say "waiting for the migrate role to apply the migrations ..."; fi
                sleep 5
                waited=$((waited + 5))
            done ;;
    esac
fi
PREFIX="${CELERY_QUEUE_PREFIX:-}"
CELERY=(python -m celery -A medlitbot_project)

case "$ROLE" in
    web)
        # On SQLite this container is the whole app, so it migrates its own database; with
        # PostgreSQL the migrate role does it once, before any web starts (docs/deploy.md).
        if [ -z "${DATABASE_URL:-}" ]; then
            python manage.py migrate --noinput
        fi
        export WEB_BIND="${WEB_BIND:-0.0.0.0:${PORT:-8000}}"
        say "serving on $WEB_BIND"
        if [ -z "${MEDLITBOT_SUPERVISED:-}" ]; then
            say "this container runs the web server only: nothing trains or classifies until worker containers run (roles worker-training, worker-inference, beat), and /readyz answers 503 until then; the role all runs them here too"
        fi
        exec gunicorn -c python:medlitbot_project.gunicorn_conf medlitbot_project.wsgi ;;
    all)
        # The whole app in one container: each role as its own process, restarted with backoff
        # when it stops; their output is this container's (podman logs). Being the whole app,
        # it migrates its database itself, SQLite or not.
        python manage.py migrate --noinput
        export MEDLITBOT_SUPERVISED=1 SUPERVISE_LOG="$LOG_DIR/supervisor.log"
        # shellcheck source=scripts/supervise.sh
        . scripts/supervise.sh
        trap 'supervise_stop_all; exit 0' TERM INT
        for role in worker-training worker-inference beat web; do
            supervise_start "$role" /dev/stdout bash "$SELF" "$role"
        done
        say "started web on port ${PORT:-8000}, the training and inference workers and beat"
        wait ;;
    worker-training)
        exec "${CELERY[@]}" worker --pool=solo --concurrency=1 --queues="${PREFIX}training" \
            --hostname="${WORKER_NAME:-training}@%h" --without-gossip --without-mingle \
            --optimization=fair --loglevel="${LOG_LEVEL:-INFO}" ;;
    worker-training-gpu)
        exec "${CELERY[@]}" worker --pool=solo --concurrency=1 --queues="${PREFIX}training.gpu" \
            --hostname="${WORKER_NAME:-gpu}@%h" --without-gossip --without-mingle \
            --optimization=fair --loglevel="${LOG_LEVEL:-INFO}" ;;
    worker-inference)
        exec nice -n "${INFERENCE_NICE:-10}" "${CELERY[@]}" worker --pool=threads --concurrency="${INFERENCE_CONCURRENCY:-2}" \
            --queues="${PREFIX}inference,${PREFIX}default" \
            --hostname="${WORKER_NAME:-inference}@%h" --without-gossip --without-mingle \
            --optimization=fair --loglevel="${LOG_LEVEL:-INFO}" ;;
    beat)
        exec "${CELERY[@]}" beat --loglevel="${LOG_LEVEL:-INFO}" \
            --schedule="$LOG_DIR/celerybeat-schedule" ;;
    migrate)
        exec python manage.py migrate --noinput ;;
    manage)
        exec python manage.py "$@" ;;
    *)
        exec "$ROLE" "$@" ;;
esac
