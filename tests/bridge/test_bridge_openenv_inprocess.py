"""OpenEnv environments served by `mcpgym serve --bridge openenv` *in process* (no `--python`),
where their library co-installs with mcpgym (openenv-core 0.3.0 does; openenv 0.10.0 pins an
mcp below mcpgym's), answer OpenEnv's clients as OpenEnv's own server does; and mcpgym's own
client reads a native OpenEnv server's observations (the scaffold's `echoed_message`).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bridge_helpers import (
    FIXTURES,
    drive_openenv_each,
    free_port,
    native_command,
    serve_native,
    started,
)

from helpers.compat import OPENENV_CORE_ENV, OPENENV_SERVER, compat
from mcpgym import SyncEnvClient
from mcpgym.types import AnyObservation

pytestmark = [pytest.mark.bridge, pytest.mark.timeout(600)]

ANSWER = "<|channel|>analysis<|message|>12 patients<|end|><|channel|>final<|message|>12<|end|>"


def _in_process_command(python: Path, target: str, path: Path) -> tuple[list[str], int]:
    """`mcpgym serve TARGET --bridge openenv` under the venv that holds mcpgym and openenv-core,
    on a free port: (argv, port)."""
    port = free_port()
    cmd = [str(python), "-m", "mcpgym.servers", "serve", target, "--bridge", "openenv"]
    return [*cmd, "--bridge-path", str(path), "--port", str(port)], port


def _masked(reads: dict[str, Any]) -> str:
    for played in reads.values():
        state = played.get("state")
        if isinstance(state, dict) and state.get("episode_id"):
            state["episode_id"] = "(drawn)"
    return json.dumps(reads, sort_keys=True)


@pytest.fixture
def dipg_dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """openenv-dipg-safety's dataset as a local JSON file: all it needs offline."""
    user = "<context>Drug X was given to 12 patients.</context>\n<question>How many?</question>"
    row = {"messages": [{"role": "user", "content": user}, {"role": "assistant", "content": "12"}]}
    (tmp_path / "dipg.jsonl").write_text(json.dumps(row) + "\n")
    monkeypatch.setenv("DIPG_DATASET_PATH", str(tmp_path / "dipg.jsonl"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    yield tmp_path


@compat(
    OPENENV_CORE_ENV,
    "GenericEnvClient, typed EnvClient, MCPToolClient",
    "works",
    "openenv-dipg-safety and an echo MCPEnvironment served in process (no worker; the "
    "library co-installs): equal reads to OpenEnv's own server",
)
@pytest.mark.parametrize(
    ("target", "app", "script"),
    [
        (
            "med_safety_gym.app:app",
            "med_safety_gym.app:app",
            {"reset": {"seed": 1}, "steps": [{"llm_response": ANSWER}, {"nope": 1}]},
        ),
        (
            "openenv_echo:EchoEnvironment",
            "openenv_echo:app",
            {
                "reset": {},
                "steps": [
                    {"type": "list_tools"},
                    {
                        "type": "call_tool",
                        "tool_name": "echo_message",
                        "arguments": {"message": "x"},
                    },
                ],
                "tools": [["echo_with_length", {"message": "abc"}]],
            },
        ),
    ],
    ids=["openenv-dipg-safety", "echo-mcp"],
)
def test_served_in_process_as_openenv_serves_it(
    worker_venvs: dict[str, Path],
    dipg_dataset: Path,
    target: str,
    app: str,
    script: dict[str, Any],
) -> None:
    core = worker_venvs["openenv-core"]
    path = FIXTURES if target.startswith("openenv_") else dipg_dataset
    ours_cmd = _in_process_command(worker_venvs["mcpgym-openenv-core"], target, path)
    with (  # both servers start at once, then both drivers play at once (each imports OpenEnv)
        started(*native_command(core, app), cwd=path) as native_server,
        started(*ours_cmd) as our_server,
    ):
        urls = [native_server.wait(), our_server.wait()]
        native, ours = drive_openenv_each(core, urls, script, path)
    assert _masked(ours) == _masked(native)
    assert ours["generic"]["steps"][0]["observation"]  # something was played


@compat(
    OPENENV_SERVER,
    "mcpgym SyncEnvClient",
    "works",
    "the `openenv init` scaffold on OpenEnv's own server: typed observation fields, "
    "metadata and rewards read as sent",
)
def test_mcpgym_client_reads_a_native_openenv_server(
    worker_venvs: dict[str, Path], tmp_path: Path
) -> None:
    cli = worker_venvs["openenv"].parent / "openenv"
    subprocess.run([str(cli), "init", "my_env", "-o", str(tmp_path)], check=True, timeout=120)
    with serve_native(worker_venvs["openenv"], "my_env.server.app:app", path=tmp_path) as url:
        with SyncEnvClient(url, timeout=120) as client:
            first = client.reset()
            step = client.step({"message": "hello"})
    assert isinstance(first.observation, AnyObservation) and first.reward == 0.0
    assert step.observation.echoed_message == "hello"  # type: ignore[attr-defined]
    assert step.observation.metadata == {"original_message": "hello", "step": 1}
    assert step.reward == pytest.approx(0.5)
