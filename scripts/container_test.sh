#!/usr/bin/env bash
# The whole path through containers (issue 40; docs/deploy.md, "Containers"): build the image
# and the Redis and PostgreSQL images (docker/*.Containerfile, from Debian's packages on the same
# base, so no registry is needed), start Redis (with a password), PostgreSQL, web, both workers
# and beat as containers, migrate, create a user, import the demo data through the API, train a
# TF-IDF model, classify a batch, check /readyz; then a worker container without Redis (the
# filesystem broker) runs a task, and one container of the default role (all) is the whole app
# with /readyz ready; with COMPOSE=1, compose.yaml's stack too. Then it stops and removes
# everything it started, whatever happened.
#
#   bash scripts/container_test.sh
#
# Uses podman, or docker where its daemon answers (CONTAINER_ENGINE=docker|podman to choose).
# Every container runs on the host network on free ports it picks, with names of its own, so it
# never meets this machine's own Redis or PostgreSQL. Takes minutes: not part of .ci/run.
#
# Settings (environment):
#   BASE_IMAGE      the Containerfile's base. Default: scripts/container_base.sh's choice
#                   (localhost/debian-base:bookworm if that image exists, else
#                   python:3.11-slim-bookworm if it can be pulled, else a base debootstrapped
#                   here, root and debootstrap needed, and kept for next time)
#   IMAGE           the tag to build (localhost/medlitbot:latest)
#   COMPOSE=1       also run compose.yaml's stack (podman-compose or docker compose) offline,
#                   on the images built here, and check its /readyz
#   BUILD_NICE      niceness of the builds (10)
#   KEEP_IMAGES=1   is the default: the images stay, so a rerun reuses every layer
set -Eeuo pipefail
cd "$(dirname "$0")/.."

IMAGE="${IMAGE:-localhost/medlitbot:latest}"
REDIS_IMAGE="${REDIS_IMAGE:-localhost/medlitbot-redis:7}"
POSTGRES_IMAGE="${POSTGRES_IMAGE:-localhost/medlitbot-postgres:15}"
RUN_ID="medlitbot-ct-$$"
T_START="$(date +%s.%N)"
TMP="$(mktemp -d)"

say() { printf '[container_test] %s\n' "$*"; }
fail() { say "FAILED: $*"; exit 1; }
now() { date +%s.%N; }
seconds_since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(now)"; }
STEP_T=""
STEP_NAME=""
step() {  # ends the step under way (printing its time), starts the next
    if [ -n "$STEP_NAME" ]; then say "$STEP_NAME: $(seconds_since "$STEP_T") s"; fi
    STEP_NAME="$1"
    STEP_T="$(now)"
    if [ -n "$STEP_NAME" ]; then say "-> $STEP_NAME"; fi
}

# --- the container engine ---------------------------------------------------------------------
ENGINE="${CONTAINER_ENGINE:-}"
if [ -z "$ENGINE" ]; then
    if command -v podman >/dev/null 2>&1; then ENGINE=podman
    elif command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then ENGINE=docker
    else fail "neither podman nor a running docker daemon (apt-get install podman runc)"; fi
fi
if [ "$ENGINE" = podman ] && [ -z "${CONTAINERS_CONF:-}" ]; then
    # Where the container manager may not raise the limits it is given by default (as on the
    # machine this project is developed on), containers start only without them.
    printf '[containers]\ndefault_ulimits = []\n' > "$TMP/containers.conf"
    export CONTAINERS_CONF="$TMP/containers.conf"
fi
# podman without systemd (as in this project's sandbox) says on every start and removal of a
# container with a HEALTHCHECK that it cannot schedule it; the script runs each healthcheck
# itself at the end, so those lines are dropped.
E() { "$ENGINE" "$@" 2> >(grep -v 'unable to get systemd connection' >&2 || true); }

# --- clean up on exit: everything this run started, nothing else -------------------------------
CONTAINERS=()
VOLUMES=()
remove_all() {
    if [ "${#CONTAINERS[@]}" -gt 0 ]; then
        E rm -f -v -t 20 "${CONTAINERS[@]}" >/dev/null 2>&1 || E rm -f -v "${CONTAINERS[@]}" >/dev/null 2>&1 || true
    fi
    if [ "${#VOLUMES[@]}" -gt 0 ]; then E volume rm -f "${VOLUMES[@]}" >/dev/null 2>&1 || true; fi
    if [ "${#CONTAINERS[@]}" -gt 0 ] || [ "${#VOLUMES[@]}" -gt 0 ]; then
        say "stopped and removed ${#CONTAINERS[@]} containers and ${#VOLUMES[@]} volumes"
    fi
    CONTAINERS=()
    VOLUMES=()
}
cleanup() {
    local status=$?
    trap - EXIT INT TERM ERR
    if [ "$status" -ne 0 ]; then
        for name in "${CONTAINERS[@]}"; do
            say "--- last lines of $name ---"
            E logs --tail 40 "$name" 2>&1 | sed 's/^/    /' || true
        done
    fi
    remove_all
    rm -rf "$TMP"
    exit "$status"
}
trap cleanup EXIT
trap 'say "failed at line $LINENO: $BASH_COMMAND"' ERR
trap 'exit 130' INT
trap 'exit 143' TERM

# --- the base image ------------------------------------------------------------------------------
step "base image"
if [ -z "${BASE_IMAGE:-}" ]; then
    BASE_IMAGE="$(ENGINE="$ENGINE" bash scripts/container_base.sh)" || fail "no base image"
fi
say "base: $BASE_IMAGE"

# --- pip's configuration for the build: this machine's mirror, wheels and CA, read-only ---------
BUILD_ARGS=(--build-arg "BASE_IMAGE=$BASE_IMAGE")
PIP_CONF="$(python3 -m pip config list 2>/dev/null || true)"
pip_value() {  # the value of a pip setting: the environment's PIP_X, else pip config's
    local env_name
    env_name="PIP_$(echo "$1" | tr 'a-z-' 'A-Z_')"
    if [ -n "${!env_name:-}" ]; then printf '%s' "${!env_name}"; return; fi
    printf '%s\n' "$PIP_CONF" | grep -E "^[^=]*\.$1=" | tail -n 1 | cut -d= -f2- | sed -E "s/^'(.*)'$/\1/" || true
}
MOUNTS=()
mount_local() {  # each local folder a setting names, bind-mounted read-only into the build
    local item path
    for item in $1; do
        path="${item#file://}"
        path="${path%/simple}"
        path="${path%/}"
        if [ "${path#/}" != "$path" ] && [ -e "$path" ]; then MOUNTS+=(-v "$path:$path:ro"); fi
    done
}
FIND_LINKS="$(pip_value find-links)"
INDEX_URL="$(pip_value index-url)"
EXTRA_INDEX_URL="$(pip_value extra-index-url)"
CERT="$(pip_value cert)"
if [ "$ENGINE" = podman ]; then
    mount_local "$FIND_LINKS $INDEX_URL $EXTRA_INDEX_URL"
    if [ -n "$FIND_LINKS" ]; then BUILD_ARGS+=(--build-arg "PIP_FIND_LINKS=$FIND_LINKS"); fi
    if [ -n "$INDEX_URL" ]; then BUILD_ARGS+=(--build-arg "PIP_INDEX_URL=$INDEX_URL"); fi
    if [ -n "$EXTRA_INDEX_URL" ]; then BUILD_ARGS+=(--build-arg "PIP_EXTRA_INDEX_URL=$EXTRA_INDEX_URL"); fi
    if [ -n "$CERT" ] && [ -f "$CERT" ]; then
        # A proxy's CA that this machine trusts, which the base image does not know.
        MOUNTS+=(-v "$CERT:/run/pip-ca.crt:ro")
        BUILD_ARGS+=(--build-arg "PIP_CERT=/run/pip-ca.crt")
    fi
    # A CPU torch wheel among the local wheels: no other index is asked for torch.
    for item in $FIND_LINKS; do
        if ls "${item#file://}"/torch-*+cpu-*.whl >/dev/null 2>&1; then
            BUILD_ARGS+=(--build-arg "TORCH_INDEX_URL="); break
        fi
    done
    FORMAT=(--format docker)  # OCI images drop HEALTHCHECK
else
    FORMAT=()
fi

# --- build -----------------------------------------------------------------------------------------
step "build $IMAGE"
# The context is the files git sees (tracked, and untracked but not ignored), each with one fixed
# modification time: podman 4.3's layer cache counts a file's time, so a fresh clone or a touched
# requirements.txt would otherwise install every requirement again.
CONTEXT=.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    CONTEXT="$TMP/context"
    mkdir -p "$CONTEXT"
    # shellcheck disable=SC2016  # the inner sh expands "$f"
    git ls-files -z --cached --others --exclude-standard \
        | xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh \
        | tar --null -T - -cf - | tar -C "$CONTEXT" -xf -
    find "$CONTEXT" -exec touch -h -d @946684800 {} +
fi
nice -n "${BUILD_NICE:-10}" "$ENGINE" build "${FORMAT[@]}" --network=host "${MOUNTS[@]}" \
    "${BUILD_ARGS[@]}" -f "$CONTEXT/Containerfile" -t "$IMAGE" "$CONTEXT" > "$TMP/build.log" 2>&1 \
    || { tail -40 "$TMP/build.log"; fail "building $IMAGE"; }
IMAGE_BYTES=""
for _ in 1 2 3 4 5; do  # the store can be busy for a moment right after a build
    IMAGE_BYTES="$(E image inspect --format '{{.Size}}' "$IMAGE" 2>&1)" && break
    sleep 2
done
[[ "$IMAGE_BYTES" =~ ^[0-9]+$ ]] || fail "cannot read the size of $IMAGE: $IMAGE_BYTES"
IMAGE_MB="$((IMAGE_BYTES / 1000000))"
say "image $IMAGE: $IMAGE_MB MB"
for pair in "redis:$REDIS_IMAGE" "postgres:$POSTGRES_IMAGE"; do
    step "build ${pair#*:} (docker/${pair%%:*}.Containerfile, Debian's package)"
    nice -n "${BUILD_NICE:-10}" "$ENGINE" build "${FORMAT[@]}" --network=host \
        --build-arg "BASE_IMAGE=$BASE_IMAGE" -f "docker/${pair%%:*}.Containerfile" \
        -t "${pair#*:}" docker > "$TMP/services-build.log" 2>&1 \
        || { tail -40 "$TMP/services-build.log"; fail "building ${pair#*:}"; }
done

# --- the path through containers -------------------------------------------------------------------
T_PATH="$(now)"
read -r REDIS_PORT PG_PORT WEB_PORT < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(3)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])')
secret() { python3 -c 'import secrets; print(secrets.token_hex(24))'; }
REDIS_PASSWORD="$(secret)"
PG_PASSWORD="$(secret)"
USER_PASSWORD="$(secret)"
APP_ENV=(
    -e "SECRET_KEY=$(python3 -c 'import secrets; print(secrets.token_urlsafe(50))')"
    -e "DATABASE_URL=postgres://medlitbot:$PG_PASSWORD@127.0.0.1:$PG_PORT/medlitbot"
    -e "REDIS_URL=redis://:$REDIS_PASSWORD@127.0.0.1:$REDIS_PORT/0"
    -e "PORT=$WEB_PORT"
    -e "WEB_WORKERS=2"
    -e "WORKER_HEARTBEAT_INTERVAL=2"
)
VOLUMES+=("$RUN_ID-data")
E volume create "$RUN_ID-data" >/dev/null
run_app() {  # NAME ROLE: one app container on the shared data volume
    CONTAINERS+=("$RUN_ID-$1")
    E run -d --name "$RUN_ID-$1" --hostname "$RUN_ID-$1" --network=host \
        -v "$RUN_ID-data:/data" "${APP_ENV[@]}" "$IMAGE" "$2" >/dev/null
}
wait_for() {  # SECONDS WHAT COMMAND...: retry COMMAND every second until it succeeds
    local limit="$1" what="$2"
    shift 2
    for _ in $(seq 1 "$limit"); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 1
    done
    fail "$what did not come up in $limit s"
}

step "start Redis (password) on $REDIS_PORT and PostgreSQL on $PG_PORT"
CONTAINERS+=("$RUN_ID-redis")
E run -d --name "$RUN_ID-redis" --network=host -e "REDISCLI_AUTH=$REDIS_PASSWORD" \
    "$REDIS_IMAGE" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 \
    --requirepass "$REDIS_PASSWORD" --save "" --appendonly no >/dev/null
# The image's own entrypoint makes the cluster and the database, as compose.yaml starts it.
CONTAINERS+=("$RUN_ID-postgres")
E run -d --name "$RUN_ID-postgres" --network=host -e POSTGRES_USER=medlitbot \
    -e "POSTGRES_PASSWORD=$PG_PASSWORD" -e POSTGRES_DB=medlitbot "$POSTGRES_IMAGE" \
    postgres -p "$PG_PORT" -c listen_addresses=127.0.0.1 -c fsync=off >/dev/null
wait_for 60 "Redis" sh -c "$ENGINE exec $RUN_ID-redis redis-cli -p $REDIS_PORT ping | grep -q PONG"
wait_for 120 "PostgreSQL" "$ENGINE" exec -e "PGPASSWORD=$PG_PASSWORD" "$RUN_ID-postgres" \
    psql -h 127.0.0.1 -p "$PG_PORT" -U medlitbot -d medlitbot -qc "SELECT 1"
# A wrong password is refused: the services are not open.
if E exec -e PGPASSWORD=wrong "$RUN_ID-postgres" psql -h 127.0.0.1 -p "$PG_PORT" -U medlitbot \
        -d medlitbot -qc "SELECT 1" >/dev/null 2>&1; then fail "PostgreSQL took a wrong password"; fi
if E exec -e REDISCLI_AUTH= "$RUN_ID-redis" redis-cli -p "$REDIS_PORT" ping 2>&1 | grep -q PONG; then
    fail "Redis answered without its password"
fi

step "migrate (the migrate role)"
E run --rm --network=host -v "$RUN_ID-data:/data" "${APP_ENV[@]}" "$IMAGE" migrate \
    > "$TMP/migrate.log" 2>&1 || { tail -30 "$TMP/migrate.log"; fail "migrate"; }

step "start web, training worker, inference worker and beat"
run_app web web
run_app training worker-training
run_app inference worker-inference
run_app beat beat
BASE_URL="http://127.0.0.1:$WEB_PORT"
wait_for 180 "web (/healthz)" curl -sf "$BASE_URL/healthz"

step "create a user (manage createsuperuser in the web container)"
E exec -e "DJANGO_SUPERUSER_PASSWORD=$USER_PASSWORD" "$RUN_ID-web" \
    /app/scripts/container_entrypoint.sh manage createsuperuser --noinput --username ct \
    --email ct@example.org > "$TMP/user.log" 2>&1 || { cat "$TMP/user.log"; fail "createsuperuser"; }
TOKEN="$(curl -sf -X POST -d username=ct --data-urlencode "password=$USER_PASSWORD" \
    "$BASE_URL/api/token/" | python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])')" \
    || fail "no API token for the new user"
api() {  # curl with the token; a path (/api/...) is on the web container
    local args=() arg
    for arg in "$@"; do
        case "$arg" in /api/*) args+=("$BASE_URL$arg") ;; *) args+=("$arg") ;; esac
    done
    curl -sf -H "Authorization: Token $TOKEN" "${args[@]}"
}
field() { python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
poll() {  # URL SECONDS: GET URL until is_active is false; print the last answer
    local url="$1" limit="$2" answer=""
    for _ in $(seq 1 "$limit"); do
        answer="$(api "$url")" || fail "GET $url"
        if [ "$(printf '%s' "$answer" | field is_active)" = "False" ]; then
            printf '%s' "$answer"
            return 0
        fi
        sleep 1
    done
    fail "$url still active after $limit s: $answer"
}
expect_status() {  # ANSWER STATUS
    local got
    got="$(printf '%s' "$1" | field status)"
    [ "$got" = "$2" ] || fail "status $got, not $2: $1"
}

step "import the demo data through the API"
ANSWER="$(api -F "file=@demo_data/medlit_challenge.csv" -F name="Container demo" "$BASE_URL/api/datasets/")" \
    || fail "POST /api/datasets/"
ANSWER="$(poll "$(printf '%s' "$ANSWER" | field url)" 300)"
expect_status "$ANSWER" completed
DATASET_ID="$(printf '%s' "$ANSWER" | field dataset)"
ROWS="$(api "$BASE_URL/api/datasets/$DATASET_ID/" | field row_count)"
say "dataset $DATASET_ID: $ROWS rows"

step "train a TF-IDF model (training worker)"
ANSWER="$(api -H "Content-Type: application/json" \
    -d "{\"dataset\": $DATASET_ID, \"model_type\": \"tfidf_logreg\"}" "$BASE_URL/api/jobs/")" \
    || fail "POST /api/jobs/"
JOB_ID="$(printf '%s' "$ANSWER" | field id)"
MODEL_ID="$(printf '%s' "$ANSWER" | field model_id)"
ANSWER="$(poll "$BASE_URL/api/jobs/$JOB_ID/" 600)"
expect_status "$ANSWER" completed
say "model $MODEL_ID: $(api "$BASE_URL/api/models/$MODEL_ID/" | field headline_metrics)"

step "classify a batch (inference worker)"
python3 - "$TMP/batch.csv" <<'EOF'
import csv, sys
with open("demo_data/medlit_challenge.csv", encoding="utf-8-sig", newline="") as f:
    rows = list(csv.DictReader(f, delimiter=";"))[:300]
with open(sys.argv[1], "w", encoding="utf-8", newline="") as f:
    out = csv.writer(f)
    out.writerow(["title", "abstract"])
    out.writerows([row["title"], row["abstract"]] for row in rows)
EOF
ANSWER="$(api -F "file=@$TMP/batch.csv" "$BASE_URL/api/models/$MODEL_ID/batches/")" \
    || fail "POST /api/models/$MODEL_ID/batches/"
ANSWER="$(poll "$(printf '%s' "$ANSWER" | field url)" 300)"
expect_status "$ANSWER" completed
api "$(printf '%s' "$ANSWER" | field result_url)" > "$TMP/result.csv" || fail "the batch's result"
RESULT_ROWS="$(python3 -c 'import csv, sys; print(sum(1 for _ in csv.DictReader(open(sys.argv[1], encoding="utf-8-sig"))))' "$TMP/result.csv")"
[ "$RESULT_ROWS" = 300 ] || fail "the batch's result has $RESULT_ROWS rows, not 300"
say "batch: 300 articles classified; columns: $(head -n 1 "$TMP/result.csv" | cut -c1-100)"

step "/readyz (database, broker, cache, disk, a live worker on every queue)"
wait_for 60 "/readyz" curl -sf "$BASE_URL/readyz"
say "$(curl -s "$BASE_URL/readyz" | cut -c1-300)"
step "healthchecks of the web and the workers"
for name in web training inference; do
    E exec "$RUN_ID-$name" /app/scripts/container_entrypoint.sh healthcheck >/dev/null 2>&1 \
        || fail "the healthcheck of $name failed"
done
step "stop the stack; a worker container without Redis runs a task (filesystem broker)"
remove_all
NOREDIS_ENV=(-e "SECRET_KEY=$(python3 -c 'import secrets; print(secrets.token_urlsafe(50))')")
VOLUMES+=("$RUN_ID-alone")
E volume create "$RUN_ID-alone" >/dev/null
E run --rm --network=host -v "$RUN_ID-alone:/data" "${NOREDIS_ENV[@]}" "$IMAGE" migrate \
    > "$TMP/alone-migrate.log" 2>&1 || { tail -30 "$TMP/alone-migrate.log"; fail "migrate (SQLite)"; }
CONTAINERS+=("$RUN_ID-noredis")
E run -d --name "$RUN_ID-noredis" --hostname "$RUN_ID-noredis" --network=host \
    -v "$RUN_ID-alone:/data" "${NOREDIS_ENV[@]}" "$IMAGE" worker-inference >/dev/null
wait_for 120 "the worker without Redis" sh -c "$ENGINE logs $RUN_ID-noredis 2>&1 | grep -q ' ready\.'"
# ping_worker sends a task through the same broker folder and waits for the row it writes.
E exec "$RUN_ID-noredis" /app/scripts/container_entrypoint.sh manage ping_worker \
    --queue inference --queue default --timeout 60 --roundtrip > "$TMP/ping.log" 2>&1 || { cat "$TMP/ping.log"; fail "the worker without Redis ran no task"; }
remove_all

step "one container of the default role (all): web, workers and beat, /readyz ready"
VOLUMES+=("$RUN_ID-all")
E volume create "$RUN_ID-all" >/dev/null
CONTAINERS+=("$RUN_ID-all")
E run -d --name "$RUN_ID-all" --hostname "$RUN_ID-all" --network=host -v "$RUN_ID-all:/data" \
    -e "PORT=$WEB_PORT" -e WORKER_HEARTBEAT_INTERVAL=2 "$IMAGE" >/dev/null
wait_for 240 "/readyz of the one container" curl -sf "$BASE_URL/readyz"
E exec "$RUN_ID-all" /app/scripts/container_entrypoint.sh healthcheck >/dev/null 2>&1 \
    || fail "the healthcheck of the one container failed"
remove_all

if [ "${COMPOSE:-0}" = 1 ]; then
    step "compose.yaml's stack, offline, on the images built here"
    if command -v podman-compose >/dev/null 2>&1; then COMPOSE_CMD=(podman-compose)
    elif docker compose version >/dev/null 2>&1; then COMPOSE_CMD=(docker compose)
    else fail "COMPOSE=1 needs podman-compose or docker compose"; fi
    ENV_FILE="$TMP/compose.env"
    {
        echo "SECRET_KEY=$(python3 -c 'import secrets; print(secrets.token_urlsafe(50))')"
        echo "POSTGRES_PASSWORD=$(secret)"
        echo "REDIS_PASSWORD=$(secret)"
        echo "BASE_IMAGE=$BASE_IMAGE"
        echo "MEDLITBOT_IMAGE=$IMAGE"
        echo "REDIS_IMAGE=$REDIS_IMAGE"
        echo "POSTGRES_IMAGE=$POSTGRES_IMAGE"
        echo "WEB_PORT=$WEB_PORT"
    } > "$ENV_FILE"
    # As the docs say: the variables exported (podman-compose 1.0 has no --env-file).
    set -a
    # shellcheck source=/dev/null
    . "$ENV_FILE"
    set +a
    COMPOSE_RUN=("${COMPOSE_CMD[@]}" -p "$RUN_ID" -f compose.yaml)
    compose_down() { "${COMPOSE_RUN[@]}" down -v > "$TMP/compose-down.log" 2>&1 || true; }
    trap 'compose_down; cleanup' EXIT
    "${COMPOSE_RUN[@]}" up -d > "$TMP/compose-up.log" 2>&1 \
        || { tail -40 "$TMP/compose-up.log"; compose_down; fail "compose up"; }
    wait_for 300 "compose's /readyz" curl -sf "http://127.0.0.1:$WEB_PORT/readyz"
    compose_down
    trap cleanup EXIT
fi
step "stop and remove every container and volume it started"
remove_all
step ""
PATH_S="$(seconds_since "$T_PATH")"
say "total: $(seconds_since "$T_START") s"
echo "container: ok, image $IMAGE_MB MB, path $PATH_S s"
