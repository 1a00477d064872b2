"""The `llm` agent end to end against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from eval_helpers import ScriptedModel, secret, tool_call

from helpers.server import run_server
from mcpgym import ToolInfo
from mcpgym.examples.guess import GuessEnv
from mcpgym.harness.episodes import EpisodeSpec
from mcpgym.harness.eval.cli import main
from mcpgym.harness.eval.runner import evaluate
from mcpgym.harness.llm.agent import LLMAgent, openai_tools

pytestmark = pytest.mark.server

SEED = 11

# The model's fixed play: a call with broken JSON, a call to a function that does not exist
# (both answered by the agent, never sent to the environment), then two calls in one answer
# (a wrong guess and a guess with a wrongly typed argument, which the environment rejects),
# then the right guess.
SCRIPT: list[dict[str, Any]] = [
    {"content": None, "tool_calls": [tool_call("c1", "guess", '{"n": 5')]},
    {"content": "Let me teleport.", "tool_calls": [tool_call("c2", "teleport", {})]},
    {
        "content": None,
        "tool_calls": [tool_call("c3", "guess", {"n": 50}), tool_call("c4", "guess", {"n": "x"})],
    },
    {"content": None, "tool_calls": [tool_call("c5", "guess", {"n": secret(SEED)})]},
]


@pytest.fixture
def model() -> Iterator[tuple[ScriptedModel, str]]:
    scripted = ScriptedModel(SCRIPT)
    with run_server(scripted.app()) as server:
        yield scripted, f"{server.url}/v1"


def spec(i: int = 0) -> EpisodeSpec:
    return EpisodeSpec(id=f"llm-{i}", reset={"seed": SEED}, prompt="Find the number in 1..100.")


async def test_llm_agent_plays_the_scripted_tool_calls(model: tuple[ScriptedModel, str]) -> None:
    scripted, url = model
    agent = LLMAgent(url, "scripted-model", api_key="sk-test")
    result = await evaluate(GuessEnv, agent, [spec()])
    (record,) = result.records
    assert (record.done_reason, record.success, record.agent) == ("done", True, "llm")
    assert [(c.tool, c.arguments, c.error_type) for c in record.calls] == [
        ("guess", {"n": 50}, None),
        ("guess", {"n": "x"}, "invalid_args"),
        ("guess", {"n": secret(SEED)}, None),
    ]
    assert record.tool_errors == {"invalid_args": 1}

    assert len(scripted.requests) == 4  # one model call per scripted answer
    first = scripted.requests[0]
    assert first["model"] == "scripted-model" and first["tool_choice"] == "auto"
    assert [t["function"]["name"] for t in first["tools"]] == ["guess", "hint"]
    assert first["tools"][0]["function"]["parameters"]["required"] == ["n"]
    assert first["messages"][0]["role"] == "system"
    assert first["messages"][1]["content"].startswith("Find the number in 1..100.")
    assert scripted.headers[0]["authorization"] == "Bearer sk-test"

    last = scripted.requests[-1]["messages"]
    answers = {m["tool_call_id"]: m["content"] for m in last if m["role"] == "tool"}
    assert set(answers) == {"c1", "c2", "c3", "c4"}
    assert "not valid JSON" in answers["c1"]
    assert "unknown function 'teleport'" in answers["c2"]
    verdict = "higher" if secret(SEED) > 50 else "lower"
    assert json.loads(answers["c3"]) == {"verdict": verdict, "guesses": 1}
    assert json.loads(answers["c4"])["error"]["error_type"] == "invalid_args"
    _assert_every_call_answered_before_the_next_turn(last)


def _assert_every_call_answered_before_the_next_turn(messages: list[dict[str, Any]]) -> None:
    open_calls: set[str] = set()
    for m in messages:
        if m["role"] == "assistant":
            assert not open_calls, f"unanswered tool calls {open_calls} before the next turn"
            open_calls = {c["id"] for c in m.get("tool_calls") or []}
        elif m["role"] == "tool":
            open_calls.discard(m["tool_call_id"])


async def test_concurrent_llm_episodes_each_get_their_own_conversation(
    model: tuple[ScriptedModel, str],
) -> None:
    scripted, url = model
    result = await evaluate(
        GuessEnv, LLMAgent(url, "m"), [spec(i) for i in range(6)], concurrency=6
    )
    assert all(r.success for r in result.records)
    assert len(scripted.requests) == 24


async def test_a_plain_text_answer_stops_the_episode() -> None:
    scripted = ScriptedModel([{"content": "The number is probably 42."}])
    with run_server(scripted.app()) as server:
        result = await evaluate(GuessEnv, LLMAgent(f"{server.url}/v1", "m"), [spec()])
    (record,) = result.records
    assert (record.done_reason, record.steps, record.success) == ("agent_stopped", 0, False)


async def test_repeated_malformed_calls_stop_the_episode_without_crashing() -> None:
    bad = {"content": None, "tool_calls": [tool_call("b", "guess", "[1, 2]")]}
    scripted = ScriptedModel([bad] * 10)
    with run_server(scripted.app()) as server:
        agent = LLMAgent(f"{server.url}/v1", "m", max_malformed=3)
        result = await evaluate(GuessEnv, agent, [spec()])
    (record,) = result.records
    # not "agent_stopped": the model did not choose to stop, its calls were unusable
    assert (record.done_reason, record.steps, record.success) == ("malformed", 0, False)
    assert "3 model answers in a row" in (record.error or "")
    assert "must be a JSON object" in (record.error or "")
    assert record.malformed_calls == 3 and len(record.model_turns) == 3
    assert len(scripted.requests) == 3
    tool_messages = [m for m in scripted.requests[-1]["messages"] if m["role"] == "tool"]
    assert "must be a JSON object" in tool_messages[-1]["content"]


async def test_a_failing_model_endpoint_is_an_episode_error() -> None:
    scripted = ScriptedModel([], status=500)
    with run_server(scripted.app()) as server:
        result = await evaluate(GuessEnv, LLMAgent(f"{server.url}/v1", "m"), [spec()])
    (record,) = result.records
    assert record.done_reason == "error"
    assert "ModelError: model endpoint answered HTTP 500" in (record.error or "")


def test_llm_agent_from_the_command_line(
    model: tuple[ScriptedModel, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripted, url = model
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    code = main(
        [
            "eval",
            "--env",
            "mcpgym.examples.guess:GuessEnv",
            "--agent",
            "llm",
            "--model-url",
            url,
            "--model",
            "cli-model",
            "--episodes",
            "1",
            "--seed",
            str(SEED),
            "--out",
            str(tmp_path),
            "--quiet",
        ]
    )
    assert code == 0
    record = json.loads((tmp_path / "episodes.jsonl").read_text())
    assert record["success"] and record["agent"] == "llm"
    assert scripted.requests[0]["model"] == "cli-model"
    assert scripted.headers[0]["authorization"] == "Bearer sk-from-env"


def test_tool_names_are_made_valid_function_names_and_mapped_back() -> None:
    tools = [ToolInfo(name="cal.find"), ToolInfo(name="cal_find"), ToolInfo(name="x" * 80)]
    names = [t["function"]["name"] for t in openai_tools(tools)]
    assert names[:2] == ["cal_find_1", "cal_find"] and len(names[2]) <= 64
