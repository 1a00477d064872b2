#!/usr/bin/env bash
# The three worker venvs of the bridge suite, built from PyPI in parallel and cached under
# build/bridge/ (a venv whose library version answers right is kept as it is). They are built
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
build() {  # name, distribution, version
    local dir="build/bridge/$1"
    if "$dir/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('$2') != '$3')" 2>/dev/null; then
        return 0
    fi
    rm -rf "$dir"
    { "$uv" venv --quiet --python "$(command -v "$python")" "$dir" \
        && "$uv" pip install --quiet --python "$dir/bin/python" --cache-dir build/bridge/uv-cache "$2==$3"; } > "$dir.log" 2>&1 \
        || { echo "bridge venv $1: install failed (log: $dir.log)" >&2; tail -20 "$dir.log" >&2; return 1; }
}
build openenv openenv 0.10.0 & a=$!
build verifiers031 verifiers 0.3.1 & b=$!
build verifiers040 verifiers 0.4.0 & c=$!
status=0
for pid in $a $b $c; do wait "$pid" || status=1; done
exit $status
