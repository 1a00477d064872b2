#!/usr/bin/env bash
# Install the Debian packages the container suites need, only those missing (idempotent):
#   bash .ci/container-deps.sh docker.io debootstrap docker-registry
# The docker CLI (used by .ci/base-image.sh against either engine's socket) comes with docker.io
# when the machine has none.
set -euo pipefail
missing=()
for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
command -v docker >/dev/null 2>&1 || missing+=(docker.io)
if [ "${#missing[@]}" -gt 0 ]; then
    echo "container-deps: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq "${missing[@]}" >/dev/null
fi
