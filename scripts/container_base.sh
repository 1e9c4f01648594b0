#!/usr/bin/env bash
# Prints the name of a Debian bookworm base image for the Containerfile and docker/*.Containerfile,
# making one where none is there: localhost/debian-base:bookworm if that image exists, else
# python:3.11-slim-bookworm if a registry gives it, else a base debootstrapped from this
# machine's Debian mirror (root and debootstrap needed), imported as localhost/debian-base:bookworm
# and kept for next time. Messages go to stderr; stdout is the name alone:
#
#   BASE_IMAGE="$(bash scripts/container_base.sh)"
#   podman-compose --env-file .env.containers build    # with BASE_IMAGE in that file
#
# ENGINE (podman or docker; default: podman if installed), BUILD_NICE (10).
set -Eeuo pipefail
ENGINE="${ENGINE:-${CONTAINER_ENGINE:-}}"
if [ -z "$ENGINE" ]; then
    if command -v podman >/dev/null 2>&1; then ENGINE=podman; else ENGINE=docker; fi
fi
LOCAL_BASE="localhost/debian-base:bookworm"
say() { printf '[container_base] %s\n' "$*" >&2; }

if "$ENGINE" image inspect "$LOCAL_BASE" >/dev/null 2>&1; then
    echo "$LOCAL_BASE"
    exit 0
fi
if timeout 120 "$ENGINE" pull -q python:3.11-slim-bookworm >/dev/null 2>&1; then
    echo python:3.11-slim-bookworm
    exit 0
fi
if ! command -v debootstrap >/dev/null 2>&1 || [ "$(id -u)" != 0 ]; then
    say "no base image: set BASE_IMAGE, reach a registry, or run as root with debootstrap"
    exit 1
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
# No registry: Debian's own mirror (the one apt uses here) makes the base. apt's own list of
# what it fetches, not a grep of its files: those may be deb822 .sources with no sources.list at
# all, and may name other vendors' "...-bookworm".
# shellcheck disable=SC2016  # apt expands $(RELEASE), not the shell
SUITES="$(apt-get indextargets --no-release-info --format '$(RELEASE) $(REPO_URI)' \
          'Created-By: Packages' 2>/dev/null | sort -u || true)"
MIRROR="$(printf '%s\n' "$SUITES" | awk '$1 == "bookworm" { print $2; exit }')"
MIRROR="${MIRROR:-http://deb.debian.org/debian/}"
SECURITY="$(printf '%s\n' "$SUITES" | awk '$1 == "bookworm-security" { print $2; exit }')"
say "no local base and no registry: debootstrap bookworm from $MIRROR"
nice -n "${BUILD_NICE:-10}" debootstrap --variant=minbase --include=ca-certificates \
    bookworm "$TMP/rootfs" "$MIRROR" > "$TMP/debootstrap.log" 2>&1 \
    || { tail -20 "$TMP/debootstrap.log" >&2; say "debootstrap failed"; exit 1; }
printf 'deb %s bookworm main\ndeb %s bookworm-updates main\n' "$MIRROR" "$MIRROR" \
    > "$TMP/rootfs/etc/apt/sources.list"
# The images' apt-get install then takes Debian's security fixes too.
if [ -n "$SECURITY" ]; then
    printf 'deb %s bookworm-security main\n' "$SECURITY" >> "$TMP/rootfs/etc/apt/sources.list"
fi
rm -rf "$TMP"/rootfs/var/cache/apt/archives/*.deb "$TMP"/rootfs/var/lib/apt/lists/*
tar -C "$TMP/rootfs" -c . | "$ENGINE" import - "$LOCAL_BASE" > "$TMP/import.log" 2>&1 \
    || { cat "$TMP/import.log" >&2; say "importing the base failed"; exit 1; }
echo "$LOCAL_BASE"
