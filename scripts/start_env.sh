# Sourced by start_m1.sh (and by the tests, to check what its processes get): the configuration
# every process of the app runs with. Run in the project folder, with PY set to its Python.
#
#   - .env is written from env.m1.example on first start (the Apple Silicon thread settings
#     commented out on other machines), and given a random SECRET_KEY of its own;
#   - this platform's thread and tokenizer settings are exported;
#   - the database is named: DATABASE_URL (from the environment or .env) selects PostgreSQL,
#     else SQLite. Nothing here chooses the database: settings.py reads .env itself.
# Written for bash 3.2 (macOS's /bin/bash) too.

if ! declare -F say >/dev/null; then
    say() { printf '\033[1m[medlitbot]\033[0m %s\n' "$*"; }
fi

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
# Say which database every process will use (the password masked), so a team that meant its
# PostgreSQL sees at once if this node would run on a SQLite file of its own.
_db_url="${DATABASE_URL:-$(grep -E '^DATABASE_URL=' .env | tail -n 1 | cut -d= -f2- || true)}"
_db_url="${_db_url%\"}"
_db_url="${_db_url#\"}"
if [ -n "$_db_url" ]; then
    say "database: $(printf '%s' "$_db_url" | sed -E 's#(://[^:/@]*):[^@]*@#\1:***@#') (DATABASE_URL)"
else
    say "database: SQLite (${SQLITE_PATH:-db.sqlite3}); set DATABASE_URL in .env for PostgreSQL"
fi
unset _db_url
# gunicorn's settings (medlitbot_project/gunicorn_conf.py) and the inference worker's
# concurrency and niceness are read before Django reads .env, by processes that never read it:
# .env's values for them are exported here. A value already in the environment wins, as for
# every setting.
for _name in WEB_WORKERS WEB_THREADS WEB_TIMEOUT WEB_ACCESS_LOG WEB_ERROR_LOG WEB_LOG_LEVEL \
             FORWARDED_ALLOW_IPS PROMETHEUS_MULTIPROC_DIR LOG_DIR INFERENCE_CONCURRENCY \
             INFERENCE_NICE; do
    if [ -z "${!_name:-}" ]; then
        _value="$(grep -E "^${_name}=" .env | tail -n 1 | cut -d= -f2- || true)"
        _value="${_value%\"}"
        _value="${_value#\"}"
        if [ -n "$_value" ]; then export "${_name}=${_value}"; fi
    fi
done
unset _name _value
