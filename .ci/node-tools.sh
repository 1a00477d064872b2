#!/usr/bin/env bash
# Install the npm tools the conformance and real-client tests drive, into .tools/node (gitignored).
#
#   .ci/node-tools.sh            # idempotent: re-installs only what is missing or at another version
#   export PATH="$(.ci/node-tools.sh --path):$PATH"
#
# Needs only a system node/npm (any version npm 9+ runs on) and the npm registry: Node 22 itself
# comes from npm (node-linux-<arch>@22), because the conformance suite needs Node >= 22.
# Every tool is pinned; bump a version here and the next run replaces it.
# Layout: .tools/node/<name>/ is one npm prefix per tool; .tools/node/bin/ holds wrappers that run
# each tool under Node 22: node, conformance (0.1.16), conformance-alpha (the 2026-07-28 suite),
# mcp-inspector, claude. Prints the bin folder to put first on PATH.
set -euo pipefail

NODE_MAJOR=22
CONFORMANCE=0.1.16
CONFORMANCE_ALPHA=0.2.0-alpha.12
INSPECTOR=2.12.0
CLAUDE_CODE=2.1.332

root="$(cd "$(dirname "$0")/.." && pwd)"
tools="${MCPGYM_NODE_TOOLS:-$root/.tools/node}"
bin="$tools/bin"

if [ "${1:-}" = "--path" ]; then
    echo "$bin"
    exit 0
fi

case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "node-tools: unsupported machine $(uname -m)" >&2; exit 1 ;;
esac

# install NAME SPEC: `npm install SPEC` into $tools/NAME unless the stamp says it is there.
install() {
    local name="$1" spec="$2" dir="$tools/$1"
    if [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$spec" ]; then
        return 0
    fi
    echo "node-tools: installing $spec into $dir" >&2
    rm -rf "$dir"
    mkdir -p "$dir"
    # A private HOME-free npm cache per run is not needed; npm's own cache is shared and safe.
    (cd "$dir" && echo '{"private":true}' > package.json &&
        npm install --no-audit --no-fund --loglevel=error "$spec" >&2)
    echo "$spec" > "$dir/.stamp"
}

install runtime "node-linux-$arch@$NODE_MAJOR"
install conformance "@modelcontextprotocol/conformance@$CONFORMANCE"
install conformance-alpha "@modelcontextprotocol/conformance@$CONFORMANCE_ALPHA"
install inspector "@modelcontextprotocol/inspector@$INSPECTOR"
install claude "@anthropic-ai/claude-code@$CLAUDE_CODE"

node_bin="$tools/runtime/node_modules/node-linux-$arch/bin"
[ -x "$node_bin/node" ] || { echo "node-tools: $node_bin/node is missing" >&2; exit 1; }

# wrapper NAME TARGET: a script in $bin that runs TARGET with Node 22 first on PATH.
wrapper() {
    local name="$1" target="$2"
    [ -e "$target" ] || { echo "node-tools: $target is missing" >&2; exit 1; }
    cat > "$bin/$name" <<WRAP
#!/bin/sh
PATH="$node_bin:\$PATH"
export PATH
exec "$target" "\$@"
WRAP
    chmod +x "$bin/$name"
}

mkdir -p "$bin"
ln -sf "$node_bin/node" "$bin/node"
wrapper conformance "$tools/conformance/node_modules/.bin/conformance"
wrapper conformance-alpha "$tools/conformance-alpha/node_modules/.bin/conformance"
wrapper mcp-inspector "$tools/inspector/node_modules/.bin/mcp-inspector"
wrapper claude "$tools/claude/node_modules/.bin/claude"
cat > "$tools/versions.env" <<VERS
NODE=$("$node_bin/node" --version)
CONFORMANCE=$CONFORMANCE
CONFORMANCE_ALPHA=$CONFORMANCE_ALPHA
INSPECTOR=$INSPECTOR
CLAUDE_CODE=$CLAUDE_CODE
VERS
echo "$bin"
