#!/usr/bin/env bash
# The worker venvs of the bridge suite, built from PyPI in parallel and cached under
# build/bridge/ (a venv whose pins are unchanged is kept as it is). They are built
# with uv (itself installed from PyPI with pip into build/bridge/uv-tool): pip needs about ten
# minutes to resolve each of these dependency trees, uv about twenty seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
mkdir -p build/bridge
uv=build/bridge/uv-tool/bin/uv
if ! "$uv" --version >/dev/null 2>&1; then
    "$python" -m pip install --quiet --disable-pip-version-check --target build/bridge/uv-tool "uv==0.13.8"
fi
build() {  # name, then the pinned requirements (the first is the venv's library)
    local dir="build/bridge/$1"; shift
    local want="$*"
    if [ "$(cat "$dir/.mcpgym-pins" 2>/dev/null)" = "$want" ] && "$dir/bin/python" -c "" 2>/dev/null; then
        return 0
    fi
    rm -rf "$dir"
    { "$uv" venv --quiet --python "$(command -v "$python")" "$dir" \
        && "$uv" pip install --quiet --python "$dir/bin/python" --cache-dir build/bridge/uv-cache "$@" \
        && echo "$want" > "$dir/.mcpgym-pins"; } > "$dir.log" 2>&1 \
        || { echo "bridge venv $(basename "$dir"): install failed (log: $dir.log)" >&2; tail -20 "$dir.log" >&2; return 1; }
}
# openenv 0.10.0 with ors-sdk: `openenv import` of an ORS environment runs there
build openenv openenv==0.10.0 ors-sdk==0.1.0 & a=$!
# with reasoning-gym: Verifiers' own ReasoningGymEnv runs offline on its procedural data
build verifiers031 verifiers==0.3.1 reasoning-gym==0.1.25 & b=$!
build verifiers040 verifiers==0.4.0 & c=$!
# a published OpenEnv environment on openenv-core (pulls openenv-core 0.3.0)
build openenv-core openenv-dipg-safety==0.1.67 openenv-core==0.3.0 & d=$!
# mcpgym itself beside openenv-core and that package: OpenEnv environments served in process
build mcpgym-openenv-core -e . openenv-dipg-safety==0.1.67 openenv-core==0.3.0 & e=$!
status=0
for pid in $a $b $c $d $e; do wait "$pid" || status=1; done
exit $status
