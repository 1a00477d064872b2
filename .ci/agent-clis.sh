#!/usr/bin/env bash
# Install the agent CLIs the harness-adapter acceptance suite drives, into .tools/agents (gitignored).
#
#   .ci/agent-clis.sh            # idempotent: re-installs only what is missing or at another version
#   export PATH="$(.ci/agent-clis.sh --path):$PATH"
#
# Every CLI is pinned; bump a version here and the next run replaces it. Claude Code needs
# Node >= 22 (its package.json `engines`); the machine has Node 20, so Node 22 comes from npm
# (node-linux-<arch>@22) as in .ci/node-tools.sh. Codex and OpenCode ship native binaries through
# platform-specific optional dependencies of their npm packages and run on any Node.
# Layout: .tools/agents/<name>/ is one npm prefix per tool; .tools/agents/bin/ holds wrappers that
# run each CLI with Node 22 first on PATH: node, claude, codex, opencode; versions.env records them.
set -euo pipefail

NODE_MAJOR=22
CLAUDE_CODE=2.1.332
CODEX=0.171.0
OPENCODE=1.18.33

root="$(cd "$(dirname "$0")/.." && pwd)"
tools="${MCPGYM_AGENT_TOOLS:-$root/.tools/agents}"
bin="$tools/bin"

if [ "${1:-}" = "--path" ]; then
    echo "$bin"
    exit 0
fi

case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "agent-clis: unsupported machine $(uname -m)" >&2; exit 1 ;;
esac

# install NAME SPEC: `npm install SPEC` into $tools/NAME unless the stamp says it is there.
install() {
    local name="$1" spec="$2" dir="$tools/$1"
    if [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$spec" ]; then
        return 0
    fi
    echo "agent-clis: installing $spec into $dir" >&2
    rm -rf "$dir"
    mkdir -p "$dir"
    (cd "$dir" && echo '{"private":true}' > package.json &&
        npm install --no-audit --no-fund --loglevel=error "$spec" >&2)
    echo "$spec" > "$dir/.stamp"
}

install runtime "node-linux-$arch@$NODE_MAJOR"
install claude "@anthropic-ai/claude-code@$CLAUDE_CODE"
install codex "@openai/codex@$CODEX"
install opencode "opencode-ai@$OPENCODE"

node_bin="$tools/runtime/node_modules/node-linux-$arch/bin"
[ -x "$node_bin/node" ] || { echo "agent-clis: $node_bin/node is missing" >&2; exit 1; }

# wrapper NAME TARGET: a script in $bin that runs TARGET with Node 22 first on PATH.
wrapper() {
    local name="$1" target="$2"
    [ -e "$target" ] || { echo "agent-clis: $target is missing" >&2; exit 1; }
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
wrapper claude "$tools/claude/node_modules/.bin/claude"
wrapper codex "$tools/codex/node_modules/.bin/codex"
wrapper opencode "$tools/opencode/node_modules/.bin/opencode"
cat > "$tools/versions.env" <<VERS
NODE=$("$node_bin/node" --version)
CLAUDE_CODE=$CLAUDE_CODE
CODEX=$CODEX
OPENCODE=$OPENCODE
VERS
echo "$bin"
