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
# MCPGYM_NODE_TOOLS overrides the install root. The shared steps are in .ci/lib-node.sh.
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

tag=node-tools
# shellcheck source=lib-node.sh
. "$root/.ci/lib-node.sh"

install runtime "node-linux-$arch@$NODE_MAJOR"
install conformance "@modelcontextprotocol/conformance@$CONFORMANCE"
install conformance-alpha "@modelcontextprotocol/conformance@$CONFORMANCE_ALPHA"
install inspector "@modelcontextprotocol/inspector@$INSPECTOR"
install claude "@anthropic-ai/claude-code@$CLAUDE_CODE"

link_node
wrapper conformance "$tools/conformance/node_modules/.bin/conformance"
wrapper conformance-alpha "$tools/conformance-alpha/node_modules/.bin/conformance"
wrapper mcp-inspector "$tools/inspector/node_modules/.bin/mcp-inspector"
wrapper claude "$tools/claude/node_modules/.bin/claude"
write_versions CONFORMANCE CONFORMANCE_ALPHA INSPECTOR CLAUDE_CODE
echo "$bin"
