#!/usr/bin/env bash
# Make a Python base image without any container registry (none is reachable here), idempotent.
#
#   DOCKER_HOST=... bash .ci/base-image.sh [TAG]      # prints TAG (default mcpgym-base:bookworm)
#
# A Debian bookworm minbase root filesystem with python3, venv and pip (debootstrap from the
# Debian mirror, ~1 min), imported with `docker import`. Cached twice: an engine that already has
# TAG returns at once, and the root filesystem tarball is kept in $MCPGYM_BASE_CACHE (default
# /tmp/mcpgym-base) so a second engine (Podman: ENGINE=podman) imports it without a new
# debootstrap. `mcpgym build --base TAG` builds on it; elsewhere the default base is python:3.11-slim.
set -euo pipefail

tag="${1:-mcpgym-base:bookworm}"
engine="${ENGINE:-docker}"
cache="${MCPGYM_BASE_CACHE:-/tmp/mcpgym-base}"
tarball="$cache/bookworm-python3.tar"

if "$engine" image inspect "$tag" >/dev/null 2>&1; then
    echo "$tag"
    exit 0
fi

if [ ! -s "$tarball" ]; then
    if ! command -v debootstrap >/dev/null 2>&1; then
        echo "base-image: installing debootstrap" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >&2
        apt-get install -y -qq debootstrap >&2
    fi
    mkdir -p "$cache"
    rootfs="$(mktemp -d "$cache/rootfs.XXXXXX")"
    trap 'rm -rf "$rootfs"' EXIT
    echo "base-image: debootstrap bookworm into $rootfs" >&2
    debootstrap --variant=minbase --include=python3,python3-venv,python3-pip,ca-certificates \
        bookworm "$rootfs" http://deb.debian.org/debian >"$cache/debootstrap.log" 2>&1 || {
        tail -n 30 "$cache/debootstrap.log" >&2
        exit 1
    }
    # The mirror's CA bundle may lag the host's; pip in `docker build` needs a working one.
    cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
    # apt lists and caches are dead weight in an image.
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/* "$rootfs"/usr/share/doc/* \
        "$rootfs"/usr/share/man/*
    tar -C "$rootfs" -cf "$tarball.part" .
    mv "$tarball.part" "$tarball"
fi

echo "base-image: importing $tarball as $tag" >&2
"$engine" import --change 'CMD ["/usr/bin/python3"]' --change 'ENV LANG=C.UTF-8' \
    "$tarball" "$tag" >/dev/null
echo "$tag"
