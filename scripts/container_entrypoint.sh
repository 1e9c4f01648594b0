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
#   migrate             manage.py migrate, then exit: run it before web after every upgrade
#   manage ARGS...      manage.py ARGS (createsuperuser, setup_demo, doctor, ping_worker ...)
#   healthcheck         what the image's HEALTHCHECK runs, for the role this container runs
#   anything else       run as given (bash, python ...)
#
# Without DATABASE_URL every process uses SQLite in /data; without REDIS_URL or
# CELERY_BROKER_URL the broker is kombu's filesystem transport in /data/broker. So web alone
# (`podman run -e PORT=8000 IMAGE`) migrates its SQLite database and serves the app; a team's
# deployment sets both (compose.yaml). Without SECRET_KEY a random one is made once and kept in
# /data/secret_key, so the sessions survive a restart; several containers need the same key, so
# set SECRET_KEY for them.
set -euo pipefail

ROLE="${1:-web}"
if [ "$#" -gt 0 ]; then shift; fi
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
# manage ...` in a running container leaves its role as it was.
case "$ROLE" in
    web | worker-* | beat) echo "$ROLE" > /tmp/medlitbot-role ;;
esac
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
        exec gunicorn -c python:medlitbot_project.gunicorn_conf medlitbot_project.wsgi ;;
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
