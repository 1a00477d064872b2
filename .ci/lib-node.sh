# shellcheck shell=bash
# Shared by .ci/node-tools.sh and .ci/agent-clis.sh (sourced, never run): Node 22 from npm
# (node-linux-<arch>@22), one npm prefix per tool, and wrappers that run each tool under Node 22.
#
# The sourcing script sets, before sourcing:
#   tag    prefix of its messages on stderr (node-tools, agent-clis)
#   tools  the install root: $tools/<name>/ is one npm prefix per tool
#   bin    the wrapper folder ($tools/bin)
# and gets: $arch (x64 or arm64; any other machine exits 1), `install NAME SPEC`, `link_node`
# (sets $node_bin), `wrapper NAME TARGET` and `write_versions VAR...`.

case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "$tag: unsupported machine $(uname -m)" >&2; exit 1 ;;
esac

# install NAME SPEC: `npm install SPEC` into $tools/NAME unless the stamp says it is there.
install() {
    local name="$1" spec="$2" dir="$tools/$1"
    if [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$spec" ]; then
        return 0
    fi
    echo "$tag: installing $spec into $dir" >&2
    rm -rf "$dir"
    mkdir -p "$dir"
    # A private HOME-free npm cache per run is not needed; npm's own cache is shared and safe.
    (cd "$dir" && echo '{"private":true}' > package.json &&
        npm install --no-audit --no-fund --loglevel=error "$spec" >&2)
    echo "$spec" > "$dir/.stamp"
}

# link_node: after `install runtime "node-linux-$arch@..."`, set $node_bin (Node's own bin
# folder), check that node is there, create $bin and link node into it.
link_node() {
    node_bin="$tools/runtime/node_modules/node-linux-$arch/bin"
    [ -x "$node_bin/node" ] || { echo "$tag: $node_bin/node is missing" >&2; exit 1; }
    mkdir -p "$bin"
    ln -sf "$node_bin/node" "$bin/node"
}

# wrapper NAME TARGET: a script in $bin that runs TARGET with Node 22 first on PATH.
wrapper() {
    local name="$1" target="$2"
    [ -e "$target" ] || { echo "$tag: $target is missing" >&2; exit 1; }
    cat > "$bin/$name" <<WRAP
#!/bin/sh
PATH="$node_bin:\$PATH"
export PATH
exec "$target" "\$@"
WRAP
    chmod +x "$bin/$name"
}

# write_versions VAR...: $tools/versions.env with Node's version, then VAR=value for each VAR.
# Both scripts share $tools, so entries written by the other one are kept.
write_versions() {
    local var file="$tools/versions.env" keep=""
    if [ -f "$file" ]; then
        keep="$(grep -v -E "^(NODE$(printf '|%s' "$@"))=" "$file" || true)"
    fi
    {
        [ -z "$keep" ] || echo "$keep"
        echo "NODE=$("$node_bin/node" --version)"
        for var in "$@"; do
            echo "$var=${!var}"
        done
    } > "$file.tmp"
    mv "$file.tmp" "$file"
}
