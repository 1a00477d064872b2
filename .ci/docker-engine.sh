#!/usr/bin/env bash
# Start a Docker engine of our own (idempotent) and print the line that points clients at it.
#
#   eval "$(bash .ci/docker-engine.sh)"        # -> export DOCKER_HOST=unix:///tmp/mcpgym-docker/docker.sock
#   bash .ci/docker-engine.sh --stop           # stop the engine this script started (by its pid file)
#   bash .ci/docker-engine.sh --check          # exit 0 when it answers
#
# Installs Debian's docker.io when dockerd is missing, then runs dockerd with its own data root,
# exec root and socket under $MCPGYM_DOCKER_DIR (default /tmp/mcpgym-docker), so it never touches
# a system engine. A second call while the engine answers does nothing but print the export line.
# DOCKER_SERVICE_PREFER_OFFLINE_IMAGE=1 lets single-node Swarm services use local images (no
# registry is reachable here). All progress goes to stderr; stdout is only the export line.
set -euo pipefail

dir="${MCPGYM_DOCKER_DIR:-/tmp/mcpgym-docker}"
sock="$dir/docker.sock"
pidfile="$dir/dockerd.pid"
host="unix://$sock"

answering() {
    DOCKER_HOST="$host" timeout 5 docker version --format '{{.Server.Version}}' >/dev/null 2>&1
}

name=docker-engine
log="$dir/dockerd.log"
# shellcheck source=lib-engine.sh
. "$(dirname "$0")/lib-engine.sh"
engine_flags "$@"

if ! answering; then
    if ! command -v dockerd >/dev/null 2>&1; then
        echo "docker-engine: installing docker.io" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >&2
        apt-get install -y -qq docker.io >&2
    fi
    mkdir -p "$dir/data" "$dir/exec"
    # A stale pid file or socket from a killed engine would block the new one.
    if [ -f "$pidfile" ] && ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then rm -f "$pidfile"; fi
    rm -f "$sock"
    echo "docker-engine: starting dockerd on $sock" >&2
    DOCKER_SERVICE_PREFER_OFFLINE_IMAGE=1 setsid dockerd \
        --data-root "$dir/data" --exec-root "$dir/exec" --pidfile "$pidfile" \
        -H "$host" >"$dir/dockerd.log" 2>&1 </dev/null &
    engine_wait
fi
echo "export DOCKER_HOST=$host"
