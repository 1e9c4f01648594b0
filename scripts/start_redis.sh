# Sourced by start_m1.sh (and by its test): the broker every process will use, as REDIS_URL.
# Run in the project folder, with PY, ROOT, say and warn set.
#
#   - A Redis that answers at REDIS_URL (the environment's, else .env's) is used as it is; one
#     that takes no password gets a warning (docs/deploy.md, "A password for Redis").
#   - Else, when redis-server is installed, MedLitBot starts its own, on 127.0.0.1 at
#     REDIS_URL's port, with a password: generated once, written into REDIS_URL in .env (mode
#     600), and given to redis-server in a config file (logs/redis.conf, mode 600) rather than
#     on its command line, where `ps` would show it. The cache (CACHE_URL's default) and the
#     broker inherit it from REDIS_URL.
#   - Else kombu's filesystem broker, with a warning.
# Written for bash 3.2 (macOS's /bin/bash) too.

REDIS_URL="${REDIS_URL:-$(grep -E '^REDIS_URL=' .env | tail -n 1 | cut -d= -f2- || true)}"
REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379/0}"
redis_up() {
    "$PY" -c "import redis,sys; redis.Redis.from_url(sys.argv[1], socket_connect_timeout=1).ping()" \
        "$REDIS_URL" 2>/dev/null
}
redis_shown() { printf '%s' "$REDIS_URL" | sed -E 's#(://[^:/@]*):[^@]*@#\1:***@#'; }
redis_part() {  # password | port | db of REDIS_URL
    "$PY" -c "
import sys
from urllib.parse import urlsplit
u = urlsplit(sys.argv[1])
print({'password': u.password or '', 'port': u.port or 6379,
       'db': u.path.strip('/') or '0'}[sys.argv[2]])" "$REDIS_URL" "$1"
}

if [ -z "${CELERY_BROKER_URL:-}" ] && ! redis_up; then
    if command -v redis-server >/dev/null 2>&1; then
        _port="$(redis_part port)"
        _password="$(redis_part password)"
        if [ -z "$_password" ]; then
            _password="$("$PY" -c 'import secrets; print(secrets.token_hex(24))')"
            REDIS_URL="redis://:${_password}@127.0.0.1:${_port}/$(redis_part db)"
            grep -v '^REDIS_URL=' .env > .env.tmp || true
            printf 'REDIS_URL=%s\n' "$REDIS_URL" >> .env.tmp
            chmod 600 .env.tmp
            mv .env.tmp .env
            say "generated a Redis password in .env (REDIS_URL)"
        fi
        say "no Redis at $(redis_shown): starting redis-server with a password"
        mkdir -p "$ROOT/logs"
        (umask 077 && printf 'requirepass %s\n' "$_password" > "$ROOT/logs/redis.conf")
        redis-server "$ROOT/logs/redis.conf" --port "$_port" --bind 127.0.0.1 --daemonize yes \
            --save "" --appendonly no --logfile "$ROOT/logs/redis.log" --dir "$ROOT/logs" \
            --pidfile "$ROOT/logs/redis.pid"
        for _ in $(seq 1 50); do redis_up && break; sleep 0.1; done
        unset _port _password
    fi
    if ! redis_up; then
        warn "no Redis reachable at $(redis_shown), and none could be started."
        warn "falling back to kombu's filesystem broker (logs/broker): fine for one machine,"
        warn "not for production. Install Redis for a real broker."
        export CELERY_BROKER_URL="filesystem://"
        mkdir -p logs/broker/processed
    fi
elif [ -z "${CELERY_BROKER_URL:-}" ] && [ -z "$(redis_part password)" ]; then
    warn "the Redis at $(redis_shown) takes no password: anyone who can reach it can read and"
    warn "queue jobs. Set one (docs/deploy.md, \"A password for Redis\")."
fi
export REDIS_URL
