"""The `llm` agent's requests as strict OpenAI-compatible servers want them, every model turn
recorded, malformed calls counted, and the request options reachable from the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from eval_helpers import reply, secret, tool_call
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from helpers.server import run_server
from mcpgym import ToolInfo
from mcpgym.examples.guess import GuessEnv
from mcpgym.harness.episodes import EpisodeSpec
from mcpgym.harness.eval.cli import main
from mcpgym.harness.eval.runner import evaluate
from mcpgym.harness.llm.agent import LLMAgent, ModelError
from mcpgym.harness.llm.messages import assistant_message, compact_schema, openai_tools

SEED = 11


def shape_problems(body: dict[str, Any]) -> list[str]:
    """What llama.cpp's server (the strictest we know) and vLLM refuse in a request."""
    problems: list[str] = []
    for i, m in enumerate(body["messages"]):
        if not isinstance(m.get("content"), str):
            problems.append(f"messages[{i}] ({m.get('role')}): content must be a string")
        for call in m.get("tool_calls") or []:
            if not call.get("id") or call.get("type") != "function":
                problems.append(f"messages[{i}]: tool call without id/type")
            if not isinstance(call.get("function", {}).get("arguments"), str):
                problems.append(f"messages[{i}]: tool call arguments must be a string")
        if m.get("role") == "tool" and not m.get("tool_call_id"):
            problems.append(f"messages[{i}]: tool message without tool_call_id")
    return problems


class StrictModel:
    """A scripted chat-completions server that answers HTTP 500, as llama.cpp does, to a request
    whose messages break the shapes above; its own answers use the loosest shapes servers send
    (null content, object arguments, no ids)."""

    def __init__(self, script: list[dict[str, Any]]) -> None:
        self.script, self.requests = script, []

    async def completions(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        problems = shape_problems(body)
        if problems:
            return JSONResponse({"error": {"message": "; ".join(problems)}}, status_code=500)
        turn = sum(m.get("role") == "assistant" for m in body["messages"])
        message = self.script[turn] if turn < len(self.script) else {"content": "done"}
        data = reply(message)
        data["usage"] = {"prompt_tokens": 100 + turn, "completion_tokens": 7, "total_tokens": 107}
        return JSONResponse(data)

    def app(self) -> Starlette:
        async def health(request: Request) -> Response:
            return JSONResponse({"status": "healthy"})

        return Starlette(
            routes=[
                Route("/v1/chat/completions", self.completions, methods=["POST"]),
                Route("/health", health),
            ]
        )


LOOSE_SCRIPT: list[dict[str, Any]] = [
    # null content, arguments as an object, no id, no type (Ollama-style)
    {"content": None, "tool_calls": [{"function": {"name": "guess", "arguments": {"n": 50}}}]},
    # the content key missing altogether, a raw newline inside a JSON string (invalid JSON)
    {"tool_calls": [tool_call("bad", "guess", '{"n": "5\n0"}')]},
    {"content": "", "tool_calls": [tool_call("ok", "guess", {"n": secret(SEED)})]},
]


def spec() -> EpisodeSpec:
    return EpisodeSpec(id="strict", reset={"seed": SEED}, prompt="Find the number in 1..100.")


@pytest.mark.server
async def test_a_strict_server_accepts_every_request_and_every_turn_is_recorded() -> None:
    model = StrictModel(LOOSE_SCRIPT)
    with run_server(model.app()) as server:
        result = await evaluate(GuessEnv, LLMAgent(f"{server.url}/v1", "m"), [spec()])
    (record,) = result.records
    assert record.done_reason == "done" and record.success, record.error
    assert all(shape_problems(body) == [] for body in model.requests)
    assert len(model.requests) == 3
    turns = record.model_turns
    assert [len(t["tool_calls"]) for t in turns] == [1, 1, 1]
    assert turns[0]["content"] == "" and turns[0]["usage"]["prompt_tokens"] == 100
    assert turns[1]["rejected"][0]["id"] == "bad"
    assert "not valid JSON" in turns[1]["rejected"][0]["problem"]
    assert record.malformed_calls == 1
    assert len(record.timing.model_s) == 3
    assert result.summary["malformed_tool_calls"] == 1 and result.summary["model_turns"] == 3


@settings(max_examples=200, deadline=None)
@given(
    content=st.one_of(st.none(), st.text(max_size=20), st.integers(), st.just([])),
    arguments=st.one_of(
        st.none(),
        st.text(max_size=20),
        st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    ),
    call_id=st.one_of(st.none(), st.text(min_size=1, max_size=8)),
    with_content_key=st.booleans(),
)
def test_any_answer_goes_back_in_a_shape_strict_servers_accept(
    content: Any, arguments: Any, call_id: str | None, with_content_key: bool
) -> None:
    call: dict[str, Any] = {"function": {"name": "f", "arguments": arguments}}
    if call_id is not None:
        call["id"] = call_id
    message: dict[str, Any] = {"tool_calls": [call]}
    if with_content_key:
        message["content"] = content
    out = assistant_message(message, turn=3)
    assert shape_problems({"messages": [out]}) == []
    sent = content if with_content_key and isinstance(content, str) else ""
    assert out["content"] == sent


def test_compact_schemas_accept_the_same_values_and_are_smaller() -> None:
    from jsonschema import Draft202012Validator

    from calendar_gym import CalendarEnv

    tools = [ToolInfo.model_validate(t) for t in _tool_infos(CalendarEnv)]
    full = json.dumps(openai_tools(tools))
    compact = json.dumps(openai_tools(tools, compact=True))
    assert len(compact) < 0.7 * len(full), (len(compact), len(full))
    for tool in tools:
        small = compact_schema(tool.input_schema)
        Draft202012Validator.check_schema(small)
        # the constraints survive: same required fields, same property names, same enums
        assert small.get("required") == tool.input_schema.get("required")
        assert set(small.get("properties", {})) == set(tool.input_schema.get("properties", {}))
        assert _enums(small) == _enums(tool.input_schema)


def _enums(schema: Any) -> list[str]:
    """Every enum of the schema, as sorted JSON texts."""
    found: list[str] = []
    if isinstance(schema, dict):
        if "enum" in schema:
            found.append(json.dumps(schema["enum"]))
        found += [e for v in schema.values() for e in _enums(v)]
    elif isinstance(schema, list):
        found += [e for v in schema for e in _enums(v)]
    return sorted(found)


def _tool_infos(cls: Any) -> list[dict[str, Any]]:
    env = cls()
    env.reset(seed=0)
    from mcpgym import ListToolsAction

    obs = env.step(ListToolsAction())
    return [t.model_dump() for t in obs.tools]


@pytest.mark.server
def test_request_options_reach_the_model_from_the_command_line(tmp_path: Path) -> None:
    model = StrictModel([{"content": "giving up"}])
    with run_server(model.app()) as server:
        code = main(
            [
                "eval",
                "--env",
                "mcpgym.examples.guess:GuessEnv",
                "--agent",
                "llm",
                "--model-url",
                f"{server.url}/v1",
                "--model",
                "m",
                "--episodes",
                "1",
                "--temperature",
                "0.7",
                "--max-tokens",
                "64",
                "--top-p",
                "0.9",
                "--model-option",
                "seed=7",
                "--model-option",
                'stop=["END"]',
                "--tools",
                "guess",
                "--compact-tools",
                "--model-timeout",
                "30",
                "--out",
                str(tmp_path),
                "--quiet",
            ]
        )
    assert code == 0
    body = model.requests[0]
    assert (body["temperature"], body["max_tokens"], body["top_p"]) == (0.7, 64, 0.9)
    assert (body["seed"], body["stop"]) == (7, ["END"])
    assert [t["function"]["name"] for t in body["tools"]] == ["guess"]
    record = json.loads((tmp_path / "episodes.jsonl").read_text())
    assert record["model_turns"][0]["content"] == "giving up"
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["model_turns"] == 1 and summary["malformed_tool_calls"] == 0


@pytest.mark.parametrize(
    "flag", [["--model-timeout", "0"], ["--model-timeout", "nan"], ["--model-option", "novalue"]]
)
def test_bad_request_options_are_usage_errors(
    flag: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["eval", "--env", "mcpgym.examples.guess:GuessEnv", "--agent", "llm"]
    argv += ["--model-url", "http://127.0.0.1:9/v1", "--model", "m", "--quiet", *flag]
    assert main(argv) == 2
    assert "mcpgym eval: error:" in capsys.readouterr().err


async def test_a_slow_model_is_an_episode_error_naming_the_flag() -> None:
    async def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    agent = LLMAgent("http://model/v1", "m", timeout=0.5, transport=httpx.MockTransport(slow))
    result = await evaluate(GuessEnv, agent, [spec()])
    (record,) = result.records
    assert record.done_reason == "error"
    assert "timed out after 0.5 s" in (record.error or "")
    assert "--model-timeout" in (record.error or "")
    assert issubclass(ModelError, RuntimeError)


async def test_a_task_tool_list_narrows_what_the_model_sees() -> None:
    seen: list[list[str]] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append([t["function"]["name"] for t in json.loads(request.content)["tools"]])
        return httpx.Response(200, json=reply({"content": "stop"}))

    agent = LLMAgent("http://model/v1", "m", transport=httpx.MockTransport(handler))
    narrowed = EpisodeSpec(id="n", reset={"seed": 1}, data={"tools": ["hint"]})
    await evaluate(GuessEnv, agent, [narrowed, spec()])
    assert sorted(seen) == [["guess", "hint"], ["hint"]]
