#!/usr/bin/env bash
# Start MedLitBot: install, configure, migrate, load the demo, then run every process until
# Ctrl-C: the web (gunicorn), the training worker (solo), one GPU training worker per GPU that
# nvidia-smi lists, the inference worker and celery beat.
# Safe to run again: every step skips what is already done.
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
PLATFORM="$(uname -sm)"
if [ ! -f .env ]; then
    cp env.m1.example .env
    if [ "$PLATFORM" != "Darwin arm64" ]; then
        # The Apple Silicon safety profile would cap this machine at one thread and hide its GPU.
        sed -i.bak -E 's/^(PYTORCH_ENABLE_MPS_FALLBACK|OMP_NUM_THREADS|MKL_NUM_THREADS|CUDA_VISIBLE_DEVICES)=/# (Apple Silicon only) \1=/' .env
        rm -f .env.bak
    fi
    say "wrote .env from env.m1.example"
fi
# Production mode needs a secret of its own: made once, on first start, and kept in .env.
if ! grep -qE '^SECRET_KEY=.{40,}' .env || grep -q '^SECRET_KEY=django-insecure' .env; then
    KEY="$("$PY" -c 'import secrets; print(secrets.token_urlsafe(50))')"
    grep -v '^SECRET_KEY=' .env > .env.tmp || true
    printf 'SECRET_KEY=%s\n' "$KEY" >> .env.tmp
    chmod 600 .env.tmp
    mv .env.tmp .env
    say "generated a random SECRET_KEY in .env"
fi
if [ "$PLATFORM" = "Darwin arm64" ]; then
    say "Apple Silicon: applying the M1 safety profile (CPU, one BLAS thread, no MPS fallback)"
    export PYTORCH_ENABLE_MPS_FALLBACK=0 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
    export TOKENIZERS_PARALLELISM=false CUDA_VISIBLE_DEVICES=""
else
    export TOKENIZERS_PARALLELISM=false
fi
export USE_SQLITE="${USE_SQLITE:-True}"

# --- Broker ----------------------------------------------------------------------------------
REDIS_URL="${REDIS_URL:-$(grep -E '^REDIS_URL=' .env | cut -d= -f2- || true)}"
REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379/0}"
redis_up() { "$PY" -c "import redis,sys; redis.Redis.from_url('$REDIS_URL', socket_connect_timeout=1).ping()" 2>/dev/null; }
if [ -z "${CELERY_BROKER_URL:-}" ] && ! redis_up; then
    if command -v redis-server >/dev/null 2>&1; then
        say "no Redis at $REDIS_URL: starting redis-server"
        REDIS_PORT="$(echo "$REDIS_URL" | sed -E 's#.*:([0-9]+)(/.*)?$#\1#')"
        redis-server --port "${REDIS_PORT:-6379}" --bind 127.0.0.1 --daemonize yes --save "" \
            --appendonly no --logfile "$ROOT/logs/redis.log" --dir "$ROOT/logs"
        for _ in $(seq 1 50); do redis_up && break; sleep 0.1; done
    fi
    if ! redis_up; then
        warn "no Redis reachable and redis-server is not installed."
        warn "falling back to kombu's filesystem broker (logs/broker): fine for one machine,"
        warn "not for production. Install Redis for a real broker."
        export CELERY_BROKER_URL="filesystem://"
        mkdir -p logs/broker/processed
    fi
fi
export REDIS_URL
PREFIX="${CELERY_QUEUE_PREFIX:-$(grep -E '^CELERY_QUEUE_PREFIX=' .env | cut -d= -f2- || true)}"

# --- Database and demo -----------------------------------------------------------------------
say "migrating the database"
"$PY" manage.py migrate --noinput >> logs/django.log 2>&1
"$PY" manage.py collectstatic --noinput >> logs/django.log 2>&1
"$PY" manage.py setup_demo

# --- Processes -------------------------------------------------------------------------------
PIDS=()
stop_all() {
    trap - INT TERM EXIT
    say "stopping (web, workers, beat)"
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    say "stopped"
}
trap stop_all INT TERM EXIT

CELERY=("$PY" -m celery -A medlitbot_project)
# Training: one job at a time on a solo pool (the training itself runs in a supervised child).
"${CELERY[@]}" worker --pool=solo --concurrency=1 --queues="${PREFIX}training" \
    --hostname="training@%h" --without-gossip --without-mingle --optimization=fair \
    --loglevel=INFO >> logs/celery_training.log 2>&1 &
PIDS+=($!)
# GPU training: one solo worker per GPU that nvidia-smi lists, each seeing only its own GPU, on
# the GPU queue (jobs go there while one of these is live, or when pinned with device_queue).
GPU_LOGS=""
if command -v nvidia-smi >/dev/null 2>&1; then
    GPUS="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)"
    for ((i = 0; i < ${GPUS:-0}; i++)); do
        CUDA_VISIBLE_DEVICES="$i" "${CELERY[@]}" worker --pool=solo --concurrency=1 \
            --queues="${PREFIX}training.gpu" --hostname="gpu$i@%h" --without-gossip \
            --without-mingle --optimization=fair --loglevel=INFO >> "logs/celery_gpu$i.log" 2>&1 &
        PIDS+=($!)
        GPU_LOGS="$GPU_LOGS logs/celery_gpu$i.log"
    done
    if [ "${GPUS:-0}" -gt 0 ]; then
        say "started $GPUS GPU training worker(s) on ${PREFIX}training.gpu"
    fi
fi
# Batches and maintenance: never behind a multi-hour training.
"${CELERY[@]}" worker --pool=threads --concurrency="${INFERENCE_CONCURRENCY:-2}" \
    --queues="${PREFIX}inference,${PREFIX}default" --hostname="inference@%h" \
    --without-gossip --without-mingle --optimization=fair \
    --loglevel=INFO >> logs/celery_inference.log 2>&1 &
PIDS+=($!)
"${CELERY[@]}" beat --loglevel=INFO --schedule="$ROOT/logs/celerybeat-schedule" \
    >> logs/celery_beat.log 2>&1 &
PIDS+=($!)
# The web: gunicorn, sized from this machine (medlitbot_project/gunicorn_conf.py).
WEB_BIND="$HOST:$PORT" "$VENV/bin/gunicorn" -c python:medlitbot_project.gunicorn_conf \
    medlitbot_project.wsgi >> logs/gunicorn.log 2>&1 &
PIDS+=($!)

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
               logs/celery_inference.log, logs/celery_beat.log$GPU_LOGS
  Press Ctrl-C to stop.

EOF
wait -n "${PIDS[@]}" || true
say "a process exited (Ctrl-C, or see logs/); stopping the others"
