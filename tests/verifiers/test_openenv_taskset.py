"""Export to Verifiers, the zero-code path: verifiers 0.4.0's own `openenv` taskset and its
`OpenEnvEnv.run` (with openenv-core 0.3.0's `GenericEnvClient`) play Guess the Number served by
`mcpgym serve`, a scripted player in the model's seat, and get the rewards and observations
mcpgym's own client gets for the same actions.

What the released pair does unchanged is tested too: verifiers 0.4.0 reads `client._base_url`,
an attribute of openenv 0.10.0's client that openenv-core 0.3.0's lacks, so every task fails
before the first request reaches a server. Supplying that one attribute (docs/interop.md) is the
only change; everything else is verifiers' and openenv's code.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from helpers.compat import VERIFIERS_040_CLIENT, compat
from mcpgym.client.generic import SyncGenericEnvClient

# Each test runs the verifiers venv's Python in subprocesses (importing verifiers.v1 alone takes
# ~3 s of CPU): measured 4-18 s a test at load 3-5 on 2 cores, so the default 120 s timed out at
# load 15-22. Sized for ~30x that; a hung driver still fails at its own subprocess timeout (300 s).
pytestmark = [pytest.mark.verifiers, pytest.mark.timeout(600)]

DRIVER = Path(__file__).with_name("openenv_taskset_driver.py")

# one task per reset: seeds, the environment's own options (bounds, a planted secret), and
# replies the server must refuse as data (an unknown tool, an out-of-range guess) before play
RESETS: list[dict[str, Any]] = [
    {"seed": 3},
    {"seed": 7},
    {"seed": 11, "low": 1, "high": 1000},
    {"secret": 1},
    {"seed": 5},
]
_UNKNOWN = json.dumps({"type": "call_tool", "tool_name": "no_such_tool", "arguments": {}})
_OUT_OF_RANGE = json.dumps({"type": "call_tool", "tool_name": "guess", "arguments": {"n": 0}})
_FENCED = "```json\n" + json.dumps({"type": "call_tool", "tool_name": "hint"}) + "\n```"
OPENINGS: list[list[str]] = [[], [], [], [_UNKNOWN, _OUT_OF_RANGE], [_FENCED]]


def _drive(python: Path, request: dict[str, Any]) -> list[dict[str, Any]]:
    done = subprocess.run(
        [str(python), str(DRIVER)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout)["tasks"]


def _replay(url: str, reset: dict[str, Any], replies: list[str]) -> list[dict[str, Any]]:
    """The same actions through mcpgym's own client: each step's observation, reward, done."""
    with SyncGenericEnvClient(url) as env:
        first = env.reset(**reset)
        steps = [{"observation": first.observation, "reward": first.reward, "done": first.done}]
        for reply in replies:
            action = json.loads(reply.removeprefix("```json\n").removesuffix("\n```"))
            r = env.step(action)
            steps.append({"observation": r.observation, "reward": r.reward, "done": r.done})
    return steps


@compat(
    VERIFIERS_040_CLIENT,
    "verifiers' OpenEnv taskset (openenv-core 0.3.0 GenericEnvClient)",
    "refused",
    (
        "the released pair fails inside verifiers before reaching the server ('GenericEnvClient' "
        "has no '_base_url'); the test pins the error"
    ),
)
def test_released_pair_fails_before_reaching_the_server(
    verifiers_python: Path, guess_server: str
) -> None:
    tasks = _drive(verifiers_python, {"url": guess_server, "resets": RESETS[:2]})
    assert [t["name"] for t in tasks] == [f"{guess_server}#0", f"{guess_server}#1"]
    for task in tasks:
        assert task["error"] == (
            "AttributeError: 'GenericEnvClient' object has no attribute '_base_url'"
        )


@compat(
    VERIFIERS_040_CLIENT,
    "verifiers' OpenEnv taskset (openenv-core 0.3.0 GenericEnvClient)",
    "works",
    (
        "with the base URL attribute set: the model sees mcpgym's schema and observations; "
        "rewards equal mcpgym's summed step rewards"
    ),
)
def test_openenv_taskset_plays_mcpgym_with_mcpgyms_rewards(
    verifiers_python: Path, guess_server: str
) -> None:
    request = {
        "url": guess_server,
        "resets": RESETS,
        "openings": OPENINGS,
        "base_url_attribute": True,
    }
    tasks = _drive(verifiers_python, request)
    assert len(tasks) == len(RESETS)
    for task, reset in zip(tasks, RESETS, strict=True):
        assert "error" not in task, task
        payloads, replies = task["payloads"], [a["reply"] for a in task["actions"]]
        # mcpgym's /schema names the generic MCP action, so verifiers listed the tools for the
        # model (a list_tools step before reset, as OpenEnv's MCP environments allow)
        schema = payloads[0]["action_schema"]
        assert schema["title"] == "CallToolAction"
        assert [t["name"] for t in schema["available_tools"]] == ["guess", "hint"]
        assert all(p["action_schema"] == schema for p in payloads)
        ours = _replay(guess_server, reset, replies)
        # the model saw what mcpgym's client sees: the reset observation, then each step's
        assert [p["observation"] for p in payloads] == [s["observation"] for s in ours[:-1]]
        assert ours[-1]["done"] is True and not any(s["done"] for s in ours[:-1])
        assert ours[-1]["observation"]["result"]["verdict"] == "correct"
        expected = sum(s["reward"] or 0.0 for s in ours[1:])
        assert task["rewards"] == {"openenv_reward": pytest.approx(expected)}
    # the refused calls were data for the agent, scored as mcpgym scores them
    refused = tasks[3]["payloads"][1:3]
    assert [p["observation"]["error"]["error_type"] for p in refused] == [
        "tool_not_found",
        "execution_error",
    ]
    assert tasks[4]["payloads"][1]["observation"]["tool_name"] == "hint"


INVALID = [
    '{"type": "call_tool"}',
    '{"type": "teleport"}',
    '{"type": "call_tool", "tool_name": "guess", "arguments": []}',
    "[1, 2]",
]
_SERVER_ERROR = "RuntimeError: Server error: "


def test_replies_without_a_type_are_calls_as_the_schema_shown_says(
    verifiers_python: Path, guess_server: str
) -> None:
    """The model is shown CallToolAction's schema, where `type` has a default; verifiers turns
    a bare reply into `{"tool_name": reply}`. Both are calls mcpgym answers as data."""
    untyped = json.dumps({"tool_name": "hint", "arguments": {}})
    request = {
        "url": guess_server,
        "resets": [{"seed": 1}, {"seed": 1}],
        "openings": [[untyped], ["guess 50"]],
        "base_url_attribute": True,
    }
    hinted, bare = _drive(verifiers_python, request)
    assert hinted["payloads"][1]["observation"]["tool_name"] == "hint"
    assert hinted["payloads"][1]["observation"]["error"] is None
    error = bare["payloads"][1]["observation"]["error"]
    assert (error["error_type"], bare["payloads"][1]["observation"]["tool_name"]) == (
        "tool_not_found",
        "guess 50",
    )
    for task in (hinted, bare):
        assert task["rewards"]["openenv_reward"] == pytest.approx(
            sum(s["reward"] or 0.0 for s in _replay(guess_server, {"seed": 1}, _replies(task))[1:])
        )


def _replies(task: dict[str, Any]) -> list[str]:
    replies = [a["reply"] for a in task["actions"]]
    # what verifiers' parse_action made of a reply that is not a JSON object
    return [
        r if r.lstrip().startswith(("{", "`")) else json.dumps({"tool_name": r}) for r in replies
    ]


@compat(
    VERIFIERS_040_CLIENT,
    "verifiers' OpenEnv taskset (openenv-core 0.3.0 GenericEnvClient)",
    "refused",
    "a reply that cannot be stepped ends the run with a structured VALIDATION_ERROR",
)
def test_an_invalid_action_ends_the_run_with_a_clear_error(
    verifiers_python: Path, guess_server: str
) -> None:
    """verifiers fails the episode on a reply that cannot be stepped (its client raises on the
    error frame): mcpgym answers each malformed action with a structured VALIDATION_ERROR."""
    request = {
        "url": guess_server,
        "resets": [{"seed": 1}] * len(INVALID),
        "openings": [[reply] for reply in INVALID],
        "base_url_attribute": True,
    }
    errors = [task.get("error", "") for task in _drive(verifiers_python, request)]
    for error in errors:
        assert error.startswith(_SERVER_ERROR) and error.endswith("(code: VALIDATION_ERROR)")
