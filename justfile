# mcpgym — the single entry for humans and CI. `just --list` shows every recipe.

set shell := ["bash", "-euo", "pipefail", "-c"]

python := env("PYTHON", "python3")
venv := ".venv"
py := venv / "bin/python"

# List the recipes.
default:
    @just --list

# Create .venv and install mcpgym with its dev extras (re-runs only when pyproject.toml changes).
setup:
    #!/usr/bin/env bash
    set -euo pipefail
    stamp="{{venv}}/.mcpgym-setup"
    want=$(sha256sum pyproject.toml | cut -d' ' -f1)
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then exit 0; fi
    [ -x "{{py}}" ] || {{python}} -m venv {{venv}}
    {{py}} -m pip install --quiet --disable-pip-version-check --upgrade pip
    {{py}} -m pip install --quiet --disable-pip-version-check -e ".[dev]"
    echo "$want" > "$stamp"

# Run the default test suite (in-process and real-socket tests; no npm, Docker or agent CLIs).
test *ARGS: setup
    {{py}} -m pytest -m "not interop and not conformance and not docker and not agents and not validate and not venv" {{ARGS}}

# Drive an mcpgym server with the released openenv package (own virtual environment).
test-interop *ARGS: setup
    {{py}} -m pytest -m interop {{ARGS}}

# The official MCP conformance suite and real MCP clients (installs Node 22 and the npm tools into .tools/).
test-conformance *ARGS: setup
    PATH="$(bash .ci/node-tools.sh):$PATH" CI=true {{py}} -m pytest -m conformance {{ARGS}}

# Real agent CLIs (Claude Code, Codex, OpenCode) against the scripted model (installs them into .tools/).
test-agents *ARGS: setup
    PATH="$(bash .ci/agent-clis.sh):$PATH" CI=true {{py}} -m pytest -m agents {{ARGS}}

# Lint, format check, strict types on sdk/ and servers/, import direction.
check: setup
    {{py}} -m ruff check .
    {{py}} -m ruff format --check .
    # pyright reads the code through a symlink tree laid out as the installed package
    rm -rf build/typecheck && mkdir -p build/typecheck/mcpgym
    cp -rs "$PWD/sdk/." build/typecheck/mcpgym/ && cp -rs "$PWD/servers" build/typecheck/mcpgym/servers
    cp -rs "$PWD/harness" build/typecheck/mcpgym/harness
    find build/typecheck -name __pycache__ -prune -exec rm -rf {} +
    {{py}} -m pyright
    {{py}} -m pytest -q -p no:cacheprovider tests/test_layers.py

# Format the code.
fmt: setup
    {{py}} -m ruff format .
    {{py}} -m ruff check --fix .

# Benchmarks against a bare Starlette+uvicorn floor: WS, HTTP, /mcp, cold start and memory in both
# modes, Calendar Gym reset and events_list (bounded, under 2 minutes; prints figures and ratios).
bench *ARGS: setup
    {{py}} bench/run.py {{ARGS}}

# The main job: serve Calendar Gym, run the oracle and naive agents over the whole task suite
# (both phrasings, structured and plain errors), print the tables, write reports/calendar-demo/.
demo *ARGS: setup
    {{py}} -m calendar_gym.demo {{ARGS}}

# A served example environment and one client episode over the WebSocket (Guess the Number).
example: setup
    {{py}} -m mcpgym.examples.demo

# Every validator fixture validated twice at every level, and `mcpgym init` in a fresh venv.
test-validate *ARGS: setup
    {{py}} -m pytest -m "validate or venv" tests/validate {{ARGS}}
