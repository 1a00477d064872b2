#!/usr/bin/env bash
# Install the agent CLIs the harness-adapter acceptance suite drives, into .tools/node (gitignored),
# the folder .ci/node-tools.sh uses: Node 22 and Claude Code are installed once for both suites.
#
#   .ci/agent-clis.sh            # idempotent: re-installs only what is missing or at another version
#   export PATH="$(.ci/agent-clis.sh --path):$PATH"
#
# Every CLI is pinned; bump a version here and the next run replaces it. Claude Code needs
# Node >= 22 (its package.json `engines`); the machine has Node 20, so Node 22 comes from npm
# (node-linux-<arch>@22) as in .ci/node-tools.sh. Codex and OpenCode ship native binaries through
# platform-specific optional dependencies of their npm packages and run on any Node.
# Layout: .tools/node/<name>/ is one npm prefix per tool; .tools/node/bin/ holds wrappers that
# run each CLI with Node 22 first on PATH: node, claude, codex, opencode; versions.env records them
# (merged with what node-tools.sh records).
# MCPGYM_AGENT_TOOLS overrides the install root. The shared steps are in .ci/lib-node.sh.
set -euo pipefail

NODE_MAJOR=22
CLAUDE_CODE=2.1.332
CODEX=0.171.0
OPENCODE=1.18.33

root="$(cd "$(dirname "$0")/.." && pwd)"
tools="${MCPGYM_AGENT_TOOLS:-$root/.tools/node}"  # shared with .ci/node-tools.sh
bin="$tools/bin"

if [ "${1:-}" = "--path" ]; then
    echo "$bin"
    exit 0
fi

tag=agent-clis
# shellcheck source=lib-node.sh
. "$root/.ci/lib-node.sh"

install runtime "node-linux-$arch@$NODE_MAJOR"
install claude "@anthropic-ai/claude-code@$CLAUDE_CODE"
install codex "@openai/codex@$CODEX"
install opencode "opencode-ai@$OPENCODE"

link_node
wrapper claude "$tools/claude/node_modules/.bin/claude"
wrapper codex "$tools/codex/node_modules/.bin/codex"
wrapper opencode "$tools/opencode/node_modules/.bin/opencode"
write_versions CLAUDE_CODE CODEX OPENCODE
echo "$bin"
