"""The official MCP conformance suite (npm `@modelcontextprotocol/conformance`) against the
conformance fixture, served in production mode by `mcpgym serve` on 127.0.0.1.

- 0.1.16 (the 2025-11-25 era), one run per scenario: `conformance server --url U --scenario S`.
- The 2026-07-28 alpha: one run of `conformance server --url U --requirements 2026-07-28`
  (the flag cannot be combined with `--scenario`), then one test per scenario it reports.

A scenario passes when none of its checks is a FAILURE (warnings are allowed and shown). Every
scenario is listed below, either as one that must pass or with the reason mcpgym does not offer
what it tests (docs/conformance.md); those are `xfail(strict=True)`, so one that starts passing
fails the run until the table is updated. A test also checks that the tables name exactly the
scenarios the installed suite lists, so a new scenario cannot slip by untested.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.npm import Served, run

pytestmark = pytest.mark.conformance

RESOURCES = "mcpgym environments expose tools only: no resources (resources/*)"
PROMPTS = "mcpgym environments expose tools only: no prompts (prompts/*)"
COMPLETION = (
    "completion/complete completes prompt and resource-template arguments; no prompts or resources"
)
ROOTS = (
    "ToolContext offers sampling and elicitation, not roots (deprecated in 2026-07-28, SEP-2577)"
)
BATCHED_INPUTS = (
    "needs roots, and asks three questions in one round; a ToolContext asks one per round"
)
CACHING = "the tools/list hint passes; the scenario also requires prompts/list and resources/list"
TASKS = "the tasks extension (long-running calls) is not offered; extensions are not scored"

LEGACY: dict[str, str | None] = {  # scenario -> None (must pass) or why it cannot
    "server-initialize": None,
    "logging-set-level": None,
    "ping": None,
    "completion-complete": COMPLETION,
    "tools-list": None,
    "tools-call-simple-text": None,
    "tools-call-image": None,
    "tools-call-audio": None,
    "tools-call-embedded-resource": None,
    "tools-call-mixed-content": None,
    "tools-call-with-logging": None,
    "tools-call-error": None,
    "tools-call-with-progress": None,
    "tools-call-sampling": None,
    "tools-call-elicitation": None,
    "json-schema-2020-12": None,
    "elicitation-sep1034-defaults": None,
    "server-sse-polling": None,  # passes with warnings: no SSE resumability (docs/conformance.md)
    "server-sse-multiple-streams": None,
    "elicitation-sep1330-enums": None,
    "resources-list": RESOURCES,
    "resources-read-text": RESOURCES,
    "resources-read-binary": RESOURCES,
    "resources-templates-read": RESOURCES,
    "resources-subscribe": RESOURCES,
    "resources-unsubscribe": RESOURCES,
    "prompts-list": PROMPTS,
    "prompts-get-simple": PROMPTS,
    "prompts-get-with-args": PROMPTS,
    "prompts-get-embedded-resource": PROMPTS,
    "prompts-get-with-image": PROMPTS,
    "dns-rebinding-protection": None,
}

MODERN: dict[str, str | None] = {
    "server-stateless": None,
    "completion-complete": COMPLETION,
    "tools-list": None,
    "tools-call-simple-text": None,
    "tools-call-image": None,
    "tools-call-audio": None,
    "tools-call-embedded-resource": None,
    "tools-call-mixed-content": None,
    "tools-call-error": None,
    "tools-call-with-progress": None,
    "server-sse-multiple-streams": None,
    "resources-list": RESOURCES,
    "resources-read-text": RESOURCES,
    "resources-read-binary": RESOURCES,
    "resources-templates-read": RESOURCES,
    "sep-2164-resource-not-found": None,  # an unknown resource is -32602 without resources
    "prompts-list": PROMPTS,
    "prompts-get-simple": PROMPTS,
    "prompts-get-with-args": PROMPTS,
    "prompts-get-embedded-resource": PROMPTS,
    "prompts-get-with-image": PROMPTS,
    "dns-rebinding-protection": None,
    "caching": CACHING,
    "input-required-result-basic-elicitation": None,
    "input-required-result-basic-sampling": None,
    "input-required-result-basic-list-roots": ROOTS,
    "input-required-result-request-state": None,
    "input-required-result-multiple-input-requests": BATCHED_INPUTS,
    "input-required-result-multi-round": None,
    "input-required-result-missing-input-response": None,
    "input-required-result-non-tool-request": PROMPTS,
    "input-required-result-result-type": None,
    "input-required-result-unsupported-methods": None,
    "input-required-result-tampered-state": None,
    "input-required-result-capability-check": None,
    "input-required-result-ignore-extra-params": None,
    "input-required-result-validate-input": None,
    # run and reported, never scored: pending scenarios must pass all the same
    "json-schema-2020-12": None,
    "http-header-validation": None,
    "http-custom-header-server-validation": None,
    # the tasks extension
    "tasks-lifecycle": TASKS,
    "tasks-capability-negotiation": TASKS,
    "tasks-wire-fields": TASKS,
    "tasks-request-state-removal": TASKS,
    "tasks-mrtr-input": TASKS,
    "tasks-request-headers": TASKS,
    "tasks-dispatch-and-envelope": TASKS,
    "tasks-status-notifications": None,  # nothing to notify about: passes vacuously
    "tasks-required-task-error": TASKS,
    "tasks-mrtr-composition": TASKS,
}


def cases(table: dict[str, str | None]) -> list[Any]:
    return [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=reason)) if reason else name
        for name, reason in table.items()
    ]


def checks_of(out_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """Checks of every scenario in a `-o` folder (`server-<scenario>-<timestamp>/checks.json`)."""
    results: dict[str, list[dict[str, Any]]] = {}
    for path in out_dir.glob("*/checks.json"):
        match = re.fullmatch(r"server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z", path.parent.name)
        assert match, f"unexpected result folder {path.parent.name}"
        results[match.group(1)] = json.loads(path.read_text())
    return results


def assert_passed(scenario: str, checks: list[dict[str, Any]], output: str = "") -> None:
    assert checks, f"{scenario}: no checks were recorded\n{output[-3000:]}"
    failed = [c for c in checks if c["status"] == "FAILURE"]
    warned = [f"{c['id']}: {c.get('errorMessage', '')}" for c in checks if c["status"] == "WARNING"]
    if warned:
        print(f"{scenario} warnings: {warned}")
    assert not failed, "\n".join(
        f"{scenario}: {c['id']} FAILED: {c.get('errorMessage', '')}" for c in failed
    )


def listed(node_bin: Path, env: dict[str, str], tool: str, *args: str) -> set[str]:
    """The server scenarios `conformance list` names (also those run but not scored)."""
    out = run([str(node_bin / tool), "list", "--server", *args], env, timeout=60).stdout
    names: set[str] = set()
    in_server_section = False
    for line in out.splitlines():
        if line and not line[0].isspace():
            in_server_section = line.startswith("Server scenarios")
        match = re.match(r"^\s+- ([\w/-]+)(?: \[([\w,.-]+)\])?$", line)
        if match:
            name, tag = match.groups()
            if tag == "server" or (in_server_section and tag != "client"):
                names.add(name)
    return names


def test_the_tables_cover_every_scenario(node_bin: Path, tool_env: dict[str, str]) -> None:
    assert listed(node_bin, tool_env, "conformance") == set(LEGACY)
    assert listed(node_bin, tool_env, "conformance-alpha", "--requirements", "2026-07-28") == set(
        MODERN
    )


@pytest.mark.parametrize("scenario", cases(LEGACY))
def test_2025_11_25(
    scenario: str, everything: Served, node_bin: Path, tool_env: dict[str, str], tmp_path: Path
) -> None:
    args = [
        str(node_bin / "conformance"),
        "server",
        "--url",
        everything.mcp,
        "--scenario",
        scenario,
    ]
    done = run([*args, "-o", str(tmp_path)], tool_env, timeout=180)
    results = checks_of(tmp_path)
    assert_passed(scenario, results.get(scenario, []), done.stdout + done.stderr)
    assert done.returncode == 0, done.stdout[-3000:]


@pytest.fixture(scope="module")
def modern_run(
    everything: Served,
    node_bin: Path,
    tool_env: dict[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[dict[str, list[dict[str, Any]]], str]]:
    """One run of the 2026-07-28 requirement set; its checks by scenario, and its output."""
    out = tmp_path_factory.mktemp("conformance-2026")
    args = [str(node_bin / "conformance-alpha"), "server", "--url", everything.mcp]
    done = run([*args, "--requirements", "2026-07-28", "-o", str(out)], tool_env, timeout=900)
    yield checks_of(out), done.stdout + done.stderr


@pytest.mark.parametrize("scenario", cases(MODERN))
def test_2026_07_28(scenario: str, modern_run: tuple[dict[str, list[dict[str, Any]]], str]) -> None:
    results, output = modern_run
    assert_passed(scenario, results.get(scenario, []), output)
