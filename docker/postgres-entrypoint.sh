#!/usr/bin/env bash
# docker/postgres.Containerfile's entrypoint: on first start, a cluster in $PGDATA with the
# POSTGRES_USER (superuser), POSTGRES_PASSWORD and POSTGRES_DB the official image reads; then
# PostgreSQL in the foreground, listening on every address with passwords required.
set -euo pipefail
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "[postgres] POSTGRES_PASSWORD is not set: refusing to make a cluster without one" >&2
    exit 1
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    echo "[postgres] no cluster in $PGDATA: making one for $POSTGRES_USER" >&2
    PWFILE="$(mktemp)"
    printf '%s' "$POSTGRES_PASSWORD" > "$PWFILE"
    initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$PWFILE" --auth=scram-sha-256 \
        -E UTF8 --locale=C.UTF-8 >/dev/null
    rm -f "$PWFILE"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    if [ "$POSTGRES_DB" != postgres ]; then
        # A server on the socket alone, for this one statement.
        pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -k /var/run/postgresql" -w start >/dev/null
        PGPASSWORD="$POSTGRES_PASSWORD" psql -h /var/run/postgresql -U "$POSTGRES_USER" \
            -d postgres -qc "CREATE DATABASE \"$POSTGRES_DB\"" >/dev/null
        pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    fi
fi
if [ "${1:-postgres}" = postgres ]; then
    shift || true
    exec postgres -D "$PGDATA" -c listen_addresses='*' -k /var/run/postgresql "$@"
fi
exec "$@"
