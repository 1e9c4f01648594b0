#!/usr/bin/env bash
# Start MedLitBot: install, configure, migrate, load the demo, then run every process until
# Ctrl-C: the web (gunicorn), the training worker (solo), one GPU training worker per GPU that
# nvidia-smi lists, the inference worker and celery beat.
# Safe to run again: every step skips what is already done.
#
# Supervision: a process that dies (a worker, beat, or gunicorn itself) is restarted alone, with
# backoff (1, 2, 4 ... 60 s), and each restart is logged with its exit status in
# logs/supervisor.log; the others, the web included, keep running. Ctrl-C stops everything.
# Why our own bash loop (scripts/supervise.sh) and not supervisord or honcho: it adds no
# dependency and no daemon to this one-command start, on Linux and macOS alike, and restarts
# are all this script needs. For a real server use systemd units (docs/deploy.md, `Restart=`).
set -euo pipefail

cd "$(dirname "$0")"
ROOT="$(pwd)"
HOST="${HOST:-127.0.0.1}"
PORT="${PORT:-8000}"
PYTHON="${PYTHON:-python3}"
VENV="$ROOT/.venv"
mkdir -p logs

say() { printf '\033[1m[medlitbot]\033[0m %s\n' "$*"; }
warn() { printf '\033[1;33m[medlitbot] WARNING:\033[0m %s\n' "$*" >&2; }

# --- Python environment ----------------------------------------------------------------------
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "MedLitBot needs Python 3.11 or newer; set PYTHON=/path/to/python3.11" >&2
    exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
    say "creating $VENV"
    "$PYTHON" -m venv "$VENV"
fi
STAMP="$VENV/.requirements.sha256"
WANT="$(cat requirements.txt | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
    say "installing requirements (first run takes a few minutes)"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    # torch is pinned inside requirements.txt, so pip never reaches for a CUDA build.
    "$VENV/bin/python" -m pip install --quiet -r requirements.txt
    echo "$WANT" > "$STAMP"
fi
PY="$VENV/bin/python"

# --- Configuration ---------------------------------------------------------------------------
# .env on first start with a SECRET_KEY of its own, this platform's thread settings, and which
# database every process will use: DATABASE_URL in .env (or the environment) selects
# PostgreSQL, else SQLite (scripts/start_env.sh; the tests source it too).
. "$ROOT/scripts/start_env.sh"

# --- Broker ----------------------------------------------------------------------------------
# Redis at REDIS_URL, else our own redis-server with a generated password, else kombu's
# filesystem broker (scripts/start_redis.sh; its test sources it too).
. "$ROOT/scripts/start_redis.sh"
PREFIX="${CELERY_QUEUE_PREFIX:-$(grep -E '^CELERY_QUEUE_PREFIX=' .env | cut -d= -f2- || true)}"

# --- Database and demo -----------------------------------------------------------------------
say "migrating the database"
"$PY" manage.py migrate --noinput >> logs/django.log 2>&1
"$PY" manage.py collectstatic --noinput >> logs/django.log 2>&1
"$PY" manage.py setup_demo

# --- Processes -------------------------------------------------------------------------------
# Each runs under its own restart loop (scripts/supervise.sh).
. "$ROOT/scripts/supervise.sh"
stop_all() {
    trap - INT TERM HUP EXIT
    say "stopping (web, workers, beat)"
    # Each loop stops its process (SIGTERM, SIGKILL after SUPERVISE_STOP_SECONDS) and ends.
    supervise_stop_all
    say "stopped"
}
trap stop_all INT TERM HUP EXIT

CELERY=("$PY" -m celery -A medlitbot_project)
# Training: one job at a time on a solo pool (the training itself runs in a supervised child).
supervise_start "training worker" logs/celery_training.log \
    "${CELERY[@]}" worker --pool=solo --concurrency=1 --queues="${PREFIX}training" \
    --hostname="training@%h" --without-gossip --without-mingle --optimization=fair \
    --loglevel=INFO
# GPU training: one solo worker per GPU that nvidia-smi lists, each seeing only its own GPU, on
# the GPU queue (jobs go there while one of these is live, or when pinned with device_queue).
GPU_LOGS=""
if command -v nvidia-smi >/dev/null 2>&1; then
    GPUS="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)"
    for ((i = 0; i < ${GPUS:-0}; i++)); do
        supervise_start "GPU $i training worker" "logs/celery_gpu$i.log" \
            env CUDA_VISIBLE_DEVICES="$i" "${CELERY[@]}" worker --pool=solo --concurrency=1 \
            --queues="${PREFIX}training.gpu" --hostname="gpu$i@%h" --without-gossip \
            --without-mingle --optimization=fair --loglevel=INFO
        GPU_LOGS="$GPU_LOGS logs/celery_gpu$i.log"
    done
    if [ "${GPUS:-0}" -gt 0 ]; then
        say "started $GPUS GPU training worker(s) on ${PREFIX}training.gpu"
    fi
fi
# Batches and maintenance: never behind a multi-hour training. Below the web's priority (as the
# training is), so progress polls and pages answer at once while a large batch runs.
supervise_start "inference worker" logs/celery_inference.log \
    nice -n "${INFERENCE_NICE:-10}" "${CELERY[@]}" worker --pool=threads --concurrency="${INFERENCE_CONCURRENCY:-2}" \
    --queues="${PREFIX}inference,${PREFIX}default" --hostname="inference@%h" \
    --without-gossip --without-mingle --optimization=fair --loglevel=INFO
supervise_start "beat" logs/celery_beat.log \
    "${CELERY[@]}" beat --loglevel=INFO --schedule="$ROOT/logs/celerybeat-schedule"
# The web: gunicorn, sized from this machine (medlitbot_project/gunicorn_conf.py).
supervise_start "web (gunicorn)" logs/gunicorn.log \
    env WEB_BIND="$HOST:$PORT" "$VENV/bin/gunicorn" -c python:medlitbot_project.gunicorn_conf \
    medlitbot_project.wsgi

for _ in $(seq 1 150); do
    "$PY" -c "import urllib.request; urllib.request.urlopen('http://$HOST:$PORT/healthz', timeout=1)" 2>/dev/null && break
    sleep 0.2
done

WORKERS="$("$PY" manage.py ping_worker --timeout 60 2>&1)" \
    || warn "not every worker answered: jobs will wait in their queue (logs/celery_*.log)"
say "$WORKERS"

cat <<EOF

  MedLitBot is running (production mode: gunicorn, DEBUG off).
    App:       http://$HOST:$PORT/        (demo / medlitbot-demo)
    API docs:  http://$HOST:$PORT/api/docs/
    Ready:     http://$HOST:$PORT/readyz
    Logs:      logs/access.log, logs/gunicorn.log, logs/celery_training.log,
               logs/celery_inference.log, logs/celery_beat.log$GPU_LOGS,
               logs/supervisor.log (every restart, with the exit status)
  A process that dies is restarted on its own; the others keep running.
  Press Ctrl-C to stop.

EOF
# Until Ctrl-C (or SIGTERM): the loops restart what dies, so nothing here ends on its own.
wait || true
