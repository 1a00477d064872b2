#!/usr/bin/env bash
# Start Podman's Docker-compatible API service of our own (idempotent); print the export line.
#
#   eval "$(bash .ci/podman-engine.sh)"   # -> export DOCKER_HOST=unix:///tmp/mcpgym-podman/podman.sock
#   bash .ci/podman-engine.sh --stop
#   bash .ci/podman-engine.sh --check     # exit 0 when it answers
#
# Installs Debian's podman, catatonit (the init that `init=True` needs) and runc when missing,
# writes a containers.conf that works here (cgroupfs manager; runc as the OCI runtime, since crun
# refuses this machine's hybrid cgroup v1 + v2 mounts: "cgroups in hybrid mode not supported";
# ulimits under this machine's hard nofile limit of 20000) and runs `podman system service` on a socket under $MCPGYM_PODMAN_DIR
# (default /tmp/mcpgym-podman). The `docker` SDK speaks to it as to a Docker engine.
set -euo pipefail

dir="${MCPGYM_PODMAN_DIR:-/tmp/mcpgym-podman}"
sock="$dir/podman.sock"
pidfile="$dir/service.pid"
host="unix://$sock"
conf="$dir/containers.conf"

answering() {
    [ -S "$sock" ] && curl -sf --max-time 5 --unix-socket "$sock" http://d/_ping >/dev/null 2>&1
}

name=podman-engine
log="$dir/service.log"
# shellcheck source=lib-engine.sh
. "$(dirname "$0")/lib-engine.sh"
engine_flags "$@"

if ! answering; then
    if ! command -v podman >/dev/null 2>&1 || ! command -v catatonit >/dev/null 2>&1 \
        || ! command -v curl >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1; then
        echo "podman-engine: installing podman" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >&2
        apt-get install -y -qq podman catatonit curl runc >&2
    fi
    mkdir -p "$dir"
    cat >"$conf" <<'CONF'
[containers]
default_ulimits = ["nofile=16384:16384", "nproc=16384:16384"]
init_path = "/usr/bin/catatonit"
[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
events_logger = "file"
CONF
    # The tests' plain-HTTP registry (Docker trusts 127.0.0.0/8 by itself; Podman must be told).
    cat >"$dir/registries.conf" <<CONF
unqualified-search-registries = []
[[registry]]
location = "127.0.0.1:${MCPGYM_REGISTRY_PORT:-5055}"
insecure = true
CONF
    rm -f "$sock"
    echo "podman-engine: starting podman system service on $sock" >&2
    CONTAINERS_CONF="$conf" CONTAINERS_REGISTRIES_CONF="$dir/registries.conf" setsid podman system service --time=0 "$host" \
        >"$dir/service.log" 2>&1 </dev/null &
    echo $! >"$pidfile"
    engine_wait
fi
echo "export DOCKER_HOST=$host"
