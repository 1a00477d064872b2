"""Each bridge backend plays an episode through mcpgym's client and through the official `mcp`
client (against `mcpgym serve --bridge ... --mode production`), and the final reward equals the
library's own scoring of the same actions, computed in the library's venv by a fixture script.

Backends and fixtures: `openenv` (CounterEnv, an OpenEnv 0.10.0 FastMCP-based MCPEnvironment),
`verifiers-classic` (a Verifiers 0.3.1 ToolEnv, its real rollout), `verifiers-v1` (a Verifiers
0.4.0 taskset with an MCP toolset). Needs the worker venvs (`just test-bridge` builds them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from bridge_helpers import FIXTURES, run_in, serve_bridge

from helpers.compat import OPENENV_ENV, VERIFIERS_031_ENV, VERIFIERS_040_ENV, compat
from helpers.mcp import http_client
from helpers.server import run_server
from mcpgym import CallToolAction, SyncEnvClient
from mcpgym.integrations.bridge import bridge_environment
from mcpgym.servers import create_app

pytestmark = [pytest.mark.bridge, pytest.mark.server, pytest.mark.timeout(600)]

Calls = list[tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class Case:
    backend: str
    target: str
    venv: str
    reset: dict[str, Any]  # the simulation episode's reset options
    calls: Calls  # its actions
    default_calls: Calls  # actions for the episode production mode resets (defaults)

    def library_rewards(self, python: Path, reset: dict[str, Any], calls: Calls) -> list[Any]:
        """The library's own rewards for `calls`: per step (openenv), or the final one."""
        if self.backend == "openenv":
            rows = run_in(python, "openenv_score.py", json.dumps(reset), json.dumps(calls))
            return [row["reward"] for row in rows]
        script = "vf_classic_score.py" if self.backend == "verifiers-classic" else "vf_v1_score.py"
        (row,) = run_in(python, script, str(reset.get("index", 0)), json.dumps(calls))
        return [None] * (len(calls) - 1) + [row["reward"]]


CASES = [
    Case(
        "openenv",
        "openenv_counter:CounterEnv",
        "openenv",
        {"start": 2},
        [("add", {"n": 3}), ("peek", {}), ("add", {"n": -1}), ("submit", {"guess": 4})],
        [("add", {"n": 7}), ("submit", {"guess": 8})],
    ),
    Case(
        "verifiers-classic",
        "vf_toolenv:load_environment",
        "verifiers031",
        {"index": 1},
        [
            ("add", {"a": 10, "b": 32}),
            ("lookup", {"key": "sum"}),
            ("final_answer", {"content": "42"}),
        ],
        [("add", {"a": 2, "b": 3}), ("add", {"a": 1, "b": 1}), ("final_answer", {"content": "5"})],
    ),
    Case(
        "verifiers-v1",
        "vf_taskset:load_taskset",
        "verifiers040",
        {"index": 1},
        [
            ("calc_add", {"a": 2, "b": 3}),
            ("calc_mul", {"a": 5, "b": 4}),
            ("final_answer", {"content": "20"}),
        ],
        [("calc_mul", {"a": 6, "b": 7}), ("final_answer", {"content": "41"})],
    ),
]


@compat(
    VERIFIERS_040_ENV,
    "mcpgym SyncEnvClient",
    "works",
    "a v1 taskset with an MCP toolset through --bridge verifiers-v1: the final reward "
    "equals verifiers' own scoring",
)
@compat(
    VERIFIERS_031_ENV,
    "mcpgym SyncEnvClient",
    "works",
    "a ToolEnv through --bridge verifiers-classic: the final reward equals verifiers' own"
    " rollout scoring",
)
@compat(
    OPENENV_ENV,
    "mcpgym SyncEnvClient",
    "works",
    "a FastMCP-based MCPEnvironment through --bridge openenv: per-step rewards equal to "
    "OpenEnv's own scoring of the same actions",
)
@pytest.mark.parametrize("case", CASES, ids=[c.backend for c in CASES])
def test_episode_through_mcpgym_client(worker_venvs: dict[str, Path], case: Case) -> None:
    python = worker_venvs[case.venv]
    env_cls = bridge_environment(case.backend, case.target, python=python, paths=[FIXTURES])
    with (
        run_server(create_app(env_cls)) as server,
        SyncEnvClient(server.url, timeout=150) as client,
    ):
        first = client.reset(**case.reset)
        if case.backend == "openenv":  # OpenEnv's own reset observation, as its server sends it
            assert first.observation.metadata == {"start": 2}
        else:
            assert first.observation.metadata["bridge"]["backend"] == case.backend
        names = {t.name for t in client.list_tools()}
        assert {name for name, _ in case.calls} <= names
        got = []
        for name, arguments in case.calls:
            res = client.step(CallToolAction(tool_name=name, arguments=arguments))
            assert res.observation.error is None, res.observation.error  # type: ignore[attr-defined]
            result = res.observation.result  # type: ignore[attr-defined]
            if case.backend == "openenv":  # OpenEnv's CallToolObservation: FastMCP's result
                assert "data" in result, result
            else:
                assert result["reward"] == res.reward
            got.append((res.reward, res.done))
    want = case.library_rewards(python, case.reset, case.calls)
    assert [reward for reward, _ in got] == pytest.approx(want)
    assert [done for _, done in got] == [False] * (len(got) - 1) + [True]
    assert want[-1] is not None and want[-1] > 0


@compat(
    VERIFIERS_040_ENV,
    "official mcp client (production /mcp)",
    "works",
    "tools with their schemas; the final reward equals verifiers' own scoring",
)
@compat(
    VERIFIERS_031_ENV,
    "official mcp client (production /mcp)",
    "works",
    "tools with their schemas; the final reward equals verifiers' own scoring",
)
@compat(
    OPENENV_ENV,
    "official mcp client (production /mcp)",
    "works",
    "tools with their schemas; each result's structured content carries the reward and the end",
)
@pytest.mark.parametrize("case", CASES, ids=[c.backend for c in CASES])
async def test_episode_through_spec_mcp_client(worker_venvs: dict[str, Path], case: Case) -> None:
    """Production mode: the official client sees the tools with their schemas; each result's
    structured content carries the reward and the end, as no other MCP channel would."""
    python = worker_venvs[case.venv]
    with serve_bridge(case.backend, case.target, python, "--mode", "production") as url:
        async with http_client(f"{url}/mcp", "auto") as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            for name, arguments in case.default_calls:
                assert set(arguments) <= set(listed[name].input_schema.get("properties", {}))
            results, texts = [], []
            for name, arguments in case.default_calls:
                result = await client.call_tool(name, arguments)
                assert not result.is_error, result.content
                results.append(result.structured_content)
                texts.append("".join(getattr(c, "text", "") for c in result.content))
    if case.backend == "openenv":  # the tool's own value, as OpenEnv's MCPToolClient reads it
        assert texts == ["7", "wrong"], texts
        return
    want = case.library_rewards(python, {}, case.default_calls)
    assert [r["reward"] for r in results] == pytest.approx(want)  # type: ignore[index]
    assert results[-1]["done"] is True  # type: ignore[index]
