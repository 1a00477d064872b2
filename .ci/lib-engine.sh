# Shared by docker-engine.sh and podman-engine.sh (sourced, not run). The caller sets $name, $host,
# $pidfile and $log and defines `answering` (exit 0 when the engine answers) before sourcing.
#
#   engine_flags "$@"       handles --check (exit 0 when it answers) and --stop (kill by pid file)
#   engine_wait             waits up to 60 s for `answering`; on failure prints the log tail, exits 1

engine_flags() {
    if [ "${1:-}" = "--check" ]; then  # nothing is started
        answering
        exit
    fi
    if [ "${1:-}" = "--stop" ]; then
        if [ -f "$pidfile" ]; then
            local pid
            pid="$(cat "$pidfile")"
            kill "$pid" 2>/dev/null || true
            for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
            rm -f "$pidfile"
        fi
        exit 0
    fi
}

engine_wait() {
    for _ in $(seq 1 600); do
        answering && return 0
        sleep 0.1
    done
    echo "$name: the engine did not answer within 60 s; log:" >&2
    tail -n 30 "$log" >&2
    exit 1
}
