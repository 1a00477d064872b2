"""The scripted model: which step it plays, how it names tools, what it records."""

from __future__ import annotations

from typing import Any, cast

import pytest

from capture_helpers import body
from mcpgym.harness.capture import (
    BackendError,
    Dialect,
    ModelRequest,
    parse_response,
    reassembler_for,
)
from scripted_model import ScriptedModel, StepContext, call, pick_tool, say


def request(dialect: Dialect, payload: dict[str, Any], key: str = "k") -> ModelRequest:
    return ModelRequest(dialect, key, "/v1/x", payload)


async def answer(model: ScriptedModel, req: ModelRequest) -> dict[str, Any]:
    reply = await model(req)
    if isinstance(reply, dict):
        return cast(dict[str, Any], reply)
    assert isinstance(reply, list), "the scripted model returns events as a list"
    folder = reassembler_for(req.dialect)
    for event in reply:
        folder.feed(event)
    result = folder.result()
    assert result is not None
    return result


def test_pick_tool() -> None:
    assert pick_tool("guess", ["Bash", "mcp__env__guess"]) == "mcp__env__guess"
    assert pick_tool("guess", ["env_guess", "read"]) == "env_guess"
    assert pick_tool("guess", ["guess", "env_guess"]) == "guess", "an exact name wins"
    with pytest.raises(LookupError, match="0 offered"):
        pick_tool("guess", ["Bash"])
    with pytest.raises(LookupError, match="2 offered"):
        pick_tool("guess", ["a_guess", "b__guess"])


@pytest.mark.parametrize("stream", [False, True])
async def test_the_step_is_read_from_the_history(stream: bool) -> None:
    model = ScriptedModel([call("guess", {"n": 1}), say("one"), say("two")])
    first = body("anthropic", stream=stream)
    out = await answer(model, request("anthropic", first))
    assert parse_response("anthropic", out).tool_calls[0].arguments == {"n": 1}
    again = await answer(model, request("anthropic", first))
    assert parse_response("anthropic", again).tool_calls[0].arguments == {"n": 1}, "stateless"
    later = first | {
        "messages": [
            *first["messages"],
            {"role": "assistant", "content": "x"},
            {"role": "user", "content": "y"},
            {"role": "assistant", "content": "z"},
            {"role": "user", "content": "w"},
        ]
    }
    assert (
        parse_response("anthropic", await answer(model, request("anthropic", later))).text == "two"
    )
    assert len(model.requests("k")) == 3


async def test_past_the_end_it_says_done_text() -> None:
    model = ScriptedModel([], done_text="bye")
    out = await answer(model, request("openai-chat", body("openai-chat", stream=False)))
    assert parse_response("openai-chat", out).text == "bye"


async def test_side_requests_do_not_advance_and_are_kept_apart() -> None:
    model = ScriptedModel([say("main")], side_text="A title")
    side = {"model": "m", "messages": [{"role": "user", "content": "title this"}]}
    out = await answer(model, request("openai-chat", side))
    assert parse_response("openai-chat", out).text == "A title"
    assert model.requests("k") == [] and len(model.side_requests("k")) == 1


async def test_a_missing_tool_is_an_error_not_a_hang() -> None:
    model = ScriptedModel([call("nope")])
    with pytest.raises(BackendError) as raised:
        await model(request("openai-responses", body("openai-responses", stream=True)))
    assert raised.value.status == 400
    assert "nope" in model.errors[0]


async def test_callable_steps_see_the_tool_result() -> None:
    def reply(ctx: StepContext) -> Any:
        return say(f"step {ctx.step} saw {ctx.last_tool_result}")

    model = ScriptedModel([call("guess", {"n": 3}), reply])
    payload = body("openai-chat", stream=False)
    payload["messages"] += [
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "c",
                    "type": "function",
                    "function": {"name": "mcp__env__guess", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c", "content": "lower"},
    ]
    out = await answer(model, request("openai-chat", payload))
    assert parse_response("openai-chat", out).text == "step 1 saw lower"


async def test_a_broken_step_is_reported() -> None:
    def broken(ctx: StepContext) -> Any:
        raise ValueError("bad plan")

    model = ScriptedModel([broken])
    with pytest.raises(BackendError):
        await model(request("anthropic", body("anthropic", stream=False)))
    assert "bad plan" in model.errors[0]


async def test_per_episode_scripts() -> None:
    model = ScriptedModel([say("default")])
    model.set_script("special", [say("special")])
    payload = body("anthropic", stream=False)
    special = await answer(model, request("anthropic", payload, key="special"))
    default = await answer(model, request("anthropic", payload, key="other"))
    assert parse_response("anthropic", special).text == "special"
    assert parse_response("anthropic", default).text == "default"


@pytest.mark.parametrize("stream", [False, True])
async def test_codex_namespaced_tools_are_called_with_their_namespace(stream: bool) -> None:
    payload = body("openai-responses", stream=stream)
    payload["tools"] = [
        {
            "type": "namespace",
            "name": "mcp__env",
            "description": "",
            "tools": [{"type": "function", "name": "guess", "parameters": {}}],
        }
    ]
    out = await answer(
        ScriptedModel([call("guess", {"n": 9})]), request("openai-responses", payload)
    )
    (item,) = out["output"]
    assert (item["name"], item["namespace"]) == ("guess", "mcp__env")
    assert parse_response("openai-responses", out).tool_calls[0].name == "mcp__env__guess"


@pytest.mark.parametrize("dialect", ["anthropic", "openai-chat", "openai-responses"])
async def test_text_and_a_call_in_one_answer(dialect: Dialect) -> None:
    model = ScriptedModel([call("guess", {"n": 2}, text="Let me guess.")])
    for stream in (False, True):
        message = parse_response(
            dialect, await answer(model, request(dialect, body(dialect, stream=stream)))
        )
        assert message.text == "Let me guess." and message.tool_calls[0].arguments == {"n": 2}
