"""OpenEnv's own environments through `mcpgym serve --bridge openenv` answer OpenEnv's own clients
exactly as OpenEnv's own server (`create_app`, under uvicorn) answers them: one scripted episode,
played by `GenericEnvClient`, the environment's typed client and `MCPToolClient` against both,
must read the same observations, rewards, `done`, metadata and state on every step.

Environments, none written for mcpgym: the `openenv init` scaffold (generated here by OpenEnv's
CLI; a plain `Environment` with no generic parameters), an echo `MCPEnvironment`, a board game
whose `reset()` takes no `seed`, the `openenv import` wrapper of an ORS environment (generated
here; a plain `Environment` that answers MCP actions itself), served both by class and as the
app `create_app` built, and the published `openenv-dipg-safety` package (on openenv-core).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from bridge_helpers import (
    FIXTURES,
    bridge_command,
    drive_openenv_each,
    native_command,
    started,
)

from helpers.compat import OPENENV_CORE_ENV, OPENENV_ENV, compat
from helpers.mcp import MCPGYM

pytestmark = [pytest.mark.bridge, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
ORS_SOURCE = ROOT / "tests" / "integrations" / "ors_guess.py"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory, worker_venvs: dict[str, Path]) -> Path:
    """`openenv init my_env` and `openenv import` of an ORS environment, by OpenEnv's own CLI."""
    out = tmp_path_factory.mktemp("openenv-generated")
    cli = worker_venvs["openenv"].parent / "openenv"
    subprocess.run([str(cli), "init", "my_env", "-o", str(out)], check=True, timeout=120)
    source = out / "ors_source"
    source.mkdir()
    shutil.copy(ORS_SOURCE, source / "ors_guess.py")
    subprocess.run(
        [str(cli), "import", str(source), "--name", "guess_imp", "-o", str(out / "imported")],
        check=True,
        timeout=120,
    )
    return out


def _same(native: dict[str, Any], bridged: dict[str, Any]) -> None:
    """Every client read the same; ids a server draws at random (uuid4) are masked."""
    for reads in (native, bridged):
        for played in reads.values():
            state = played.get("state")
            if isinstance(state, dict) and state.get("episode_id"):
                state["episode_id"] = "(drawn)"
    assert json.dumps(bridged, sort_keys=True) == json.dumps(native, sort_keys=True)


def _compare(
    python: Path, target: str, app: str, path: Path, script: dict[str, Any], *extra: str
) -> dict[str, Any]:
    # both servers start at once, then both drivers play at once (each imports OpenEnv)
    with (
        started(*native_command(python, app), cwd=path) as native_server,
        started(*bridge_command("openenv", target, python, *extra, path=path)) as bridge_server,
    ):
        urls = [native_server.wait(), bridge_server.wait()]
        native, bridged = drive_openenv_each(python, urls, script, path)
    _same(native, bridged)
    return bridged


@compat(
    OPENENV_ENV,
    "GenericEnvClient, typed EnvClient, MCPToolClient",
    "works",
    "the `openenv init` scaffold (a plain Environment) through --bridge openenv: every "
    "step's observation, reward, done, metadata and state equal to OpenEnv's own "
    "create_app server",
)
def test_the_openenv_init_scaffold(worker_venvs: dict[str, Path], generated: Path) -> None:
    script = {
        "reset": {},
        "steps": [{"message": "hello"}, {"message": "a longer message"}, {"nope": 1}],
        "typed": "my_env:MyEnv",
        "typed_action": "my_env:MyAction",
    }
    reads = _compare(
        worker_venvs["openenv"],
        "my_env.server.my_env_environment:MyEnvironment",
        "my_env.server.app:app",
        generated,
        script,
    )
    generic = reads["generic"]
    assert generic["reset"]["reward"] == 0.0  # OpenEnv's own reset reward, not null
    assert generic["steps"][0]["observation"]["echoed_message"] == "hello"
    assert generic["steps"][0]["metadata"] == {"original_message": "hello", "step": 1}
    assert generic["steps"][2] == {"raised": "RuntimeError"}  # a bad action is the server's error
    assert reads["typed"]["steps"][1]["reward"] == 1.0


@compat(
    OPENENV_ENV,
    "GenericEnvClient, typed EnvClient, MCPToolClient",
    "works",
    "OpenEnv's echo MCPEnvironment through --bridge openenv: list and call steps, "
    "rewards, done and state equal to OpenEnv's own server",
)
def test_an_echo_mcp_environment(worker_venvs: dict[str, Path]) -> None:
    script = {
        "reset": {"seed": 7},
        "steps": [
            {"type": "list_tools"},
            {"type": "call_tool", "tool_name": "echo_message", "arguments": {"message": "hi"}},
            {"type": "call_tool", "tool_name": "echo_with_length", "arguments": {"message": "abc"}},
            {"type": "call_tool", "tool_name": "no_such_tool", "arguments": {}},
        ],
        "tools": [["echo_message", {"message": "hi"}], ["echo_with_length", {"message": "abc"}]],
    }
    reads = _compare(
        worker_venvs["openenv"],
        "openenv_echo:EchoEnvironment",
        "openenv_echo:app",
        FIXTURES,
        script,
    )
    assert reads["mcp"]["tools"] == ["echo_message", "echo_with_length"]
    assert reads["mcp"]["calls"] == ["hi", {"message": "abc", "length": 3}]  # the tools' values
    assert reads["generic"]["steps"][1]["observation"]["result"]["data"] == "hi"


@compat(
    OPENENV_ENV,
    "GenericEnvClient, typed EnvClient, MCPToolClient",
    "works",
    "a game whose reset() takes no seed (reset options filtered by its signature, as "
    "OpenEnv's server does): equal reads on every step",
)
def test_a_game_whose_reset_takes_no_seed(worker_venvs: dict[str, Path]) -> None:
    script = {
        "reset": {"seed": 3, "episode_id": "e-1"},  # dropped: reset(self) takes neither
        "steps": [{"take": 1}, {"take": 9}, {"take": 3}, {"take": 3}, {"take": 1}],
    }
    reads = _compare(
        worker_venvs["openenv"], "openenv_nim:NimEnvironment", "openenv_nim:app", FIXTURES, script
    )
    steps = reads["generic"]["steps"]
    assert steps[0]["observation"]["pile"] == 8 and steps[1] == {"raised": "RuntimeError"}


@compat(
    OPENENV_ENV,
    "GenericEnvClient, typed EnvClient, MCPToolClient",
    "works",
    "`openenv import` output (a plain Environment answering MCP actions), by class and as"
    " its app: equal reads on every step (its /mcp tools/call is listed, not compared)",
)
@pytest.mark.parametrize("form", ["class", "app"])
def test_the_openenv_import_wrapper(
    worker_venvs: dict[str, Path], generated: Path, form: str
) -> None:
    imported = generated / "imported" / "guess_imp"
    target = {
        "class": "guess_imp.server.guess_imp_environment:GuessImpEnvironment",
        "app": "guess_imp.server.app:app",
    }[form]
    script = {
        "reset": {},
        "steps": [
            {"type": "list_tools"},
            {"type": "call_tool", "tool_name": "guess", "arguments": {"n": 5}},
            {"type": "call_tool", "tool_name": "guess", "arguments": {"n": 3}},
        ],
        # listed only: OpenEnv's own /mcp answers a plain environment's tools/call with the
        # whole CallToolObservation (its client then returns all of it); mcpgym's, the value
        "tools": [],
    }
    reads = _compare(
        worker_venvs["openenv"], target, "guess_imp.server.app:app", imported.parent, script
    )
    steps = reads["generic"]["steps"]
    assert [s["reward"] for s in steps[1:]] == [-0.1, 1.0] and steps[2]["done"] is True


@compat(
    OPENENV_CORE_ENV,
    "GenericEnvClient, typed EnvClient, MCPToolClient",
    "works",
    "the published openenv-dipg-safety package through --bridge openenv (offline, a local"
    " dataset file): equal reads to its own app",
)
def test_a_published_environment_on_openenv_core(
    worker_venvs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """openenv-dipg-safety, served by its own app module; offline it needs only its dataset as a
    local JSON file (`DIPG_DATASET_PATH`)."""
    row = {
        "messages": [
            {
                "role": "user",
                "content": "<context>Drug X was given to 12 patients.</context>\n"
                "<question>How many patients received drug X?</question>",
            },
            {"role": "assistant", "content": "12"},
        ]
    }
    dataset = tmp_path / "dipg.jsonl"
    dataset.write_text(json.dumps(row) + "\n")
    monkeypatch.setenv("DIPG_DATASET_PATH", str(dataset))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    answer = "<|channel|>analysis<|message|>12 patients<|end|><|channel|>final<|message|>12<|end|>"
    script = {"reset": {"seed": 1}, "steps": [{"llm_response": answer}]}
    reads = _compare(
        worker_venvs["openenv-core"],
        "med_safety_gym.app:app",
        "med_safety_gym.app:app",
        tmp_path,
        script,
    )
    assert reads["generic"]["reset"]["observation"]["question"].startswith("How many")
    assert reads["generic"]["steps"][0]["done"] is True


@compat(
    OPENENV_ENV,
    "mcpgym serve --bridge openenv",
    "refused",
    "an environment that cannot load: serve exits 2 at start-up with one line naming the "
    "error, before it says it is up",
)
def test_an_unloadable_target_fails_at_start_up_in_one_line(
    worker_venvs: dict[str, Path], generated: Path
) -> None:
    cmd = [*MCPGYM, "serve", "my_env.server.no_such_module:Env", "--bridge", "openenv"]
    cmd += ["--python", str(worker_venvs["openenv"]), "--bridge-path", str(generated)]
    proc = subprocess.run([*cmd, "--port", "0"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "ModuleNotFoundError" in lines[0] and "no_such_module" in lines[0]
    assert str(generated) not in lines[0] and "Traceback" not in lines[0]
