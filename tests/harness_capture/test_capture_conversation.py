"""The dialect-neutral view of requests and responses."""

from __future__ import annotations

from mcpgym.harness.capture import parse_request, parse_response


def test_anthropic_request() -> None:
    conv = parse_request(
        "anthropic",
        {
            "system": "Be brief.",
            "tools": [
                {"name": "mcp__env__guess", "description": "d", "input_schema": {"type": "object"}}
            ],
            "messages": [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hmm", "signature": "s"},
                        {"type": "text", "text": "calling"},
                        {
                            "type": "tool_use",
                            "id": "t1",
                            "name": "mcp__env__guess",
                            "input": {"n": 5},
                        },
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "t1",
                            "is_error": True,
                            "content": [{"type": "text", "text": "out of range"}],
                        },
                        {"type": "image", "source": {}},
                    ],
                },
            ],
        },
    )
    assert [p.text for p in conv.system] == ["Be brief."]
    assert conv.tool_names == ["mcp__env__guess"] and conv.assistant_turns == 1
    assistant = conv.messages[1]
    assert [p.kind for p in assistant.parts] == ["reasoning", "text", "tool_call"]
    assert assistant.text == "calling" and assistant.tool_calls[0].arguments == {"n": 5}
    result, image = conv.messages[2].parts
    assert (result.kind, result.text, result.call_id, result.is_error) == (
        "tool_result",
        "out of range",
        "t1",
        True,
    )
    assert image.kind == "image" and image.source == "messages[2].content[1]"


def test_chat_request() -> None:
    conv = parse_request(
        "openai-chat",
        {
            "messages": [
                {"role": "developer", "content": [{"type": "text", "text": "Rules."}]},
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "look"},
                        {"type": "image_url", "image_url": {"url": "x"}},
                    ],
                },
                {
                    "role": "assistant",
                    "content": None,
                    "reasoning_content": "r",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "env_guess", "arguments": '{"n": 1}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "higher"},
                {"role": "system", "content": "late system note"},
            ],
        },
    )
    assert [p.text for p in conv.system] == ["Rules."]
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool", "system"]
    call = conv.messages[1].tool_calls[0]
    assert (call.name, call.arguments, call.source) == (
        "env_guess",
        {"n": 1},
        "messages[2].tool_calls[0]",
    )
    assert conv.messages[2].parts[0].text == "higher"


def test_chat_arguments_that_are_not_json_stay_text() -> None:
    conv = parse_request(
        "openai-chat",
        {
            "messages": [
                {
                    "role": "assistant",
                    "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{broken"}}],
                }
            ]
        },
    )
    assert conv.messages[0].tool_calls[0].arguments == "{broken"


def test_responses_request_with_namespaces() -> None:
    conv = parse_request(
        "openai-responses",
        {
            "instructions": "Be brief.",
            "tools": [
                {"type": "function", "name": "exec_command", "parameters": {}},
                {
                    "type": "namespace",
                    "name": "mcp__env",
                    "description": "env tools",
                    "tools": [
                        {"type": "function", "name": "guess", "parameters": {"type": "object"}}
                    ],
                },
                {"type": "web_search"},
            ],
            "input": [
                {
                    "type": "message",
                    "role": "developer",
                    "content": [{"type": "input_text", "text": "Dev."}],
                },
                {"role": "user", "content": "Guess."},
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "plan"}]},
                {
                    "type": "function_call",
                    "name": "guess",
                    "namespace": "mcp__env",
                    "call_id": "c1",
                    "arguments": '{"n": 50}',
                },
                {"type": "function_call_output", "call_id": "c1", "output": "lower"},
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "It is lower."}],
                },
            ],
        },
    )
    assert [p.text for p in conv.system] == ["Be brief.", "Dev."]
    assert conv.tool_names == ["exec_command", "mcp__env__guess", "web_search"]
    guess = conv.tool("mcp__env__guess")
    assert guess is not None and (guess.bare, guess.namespace) == ("guess", "mcp__env")
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool", "assistant"]
    reasoning, call = conv.messages[1].parts
    assert reasoning.text == "plan" and call.name == "mcp__env__guess"
    assert conv.assistant_turns == 2


def test_responses_string_input() -> None:
    conv = parse_request("openai-responses", {"input": "hello"})
    assert conv.messages[0].text == "hello" and conv.messages[0].parts[0].source == "input"


def test_parse_response_in_each_dialect() -> None:
    assert parse_response("anthropic", {"content": [{"type": "text", "text": "a"}]}).text == "a"
    chat = {"choices": [{"message": {"role": "assistant", "content": "b"}}]}
    assert parse_response("openai-chat", chat).text == "b"
    responses = {
        "output": [{"type": "function_call", "name": "f", "call_id": "c", "arguments": "{}"}]
    }
    assert parse_response("openai-responses", responses).tool_calls[0].arguments == {}
    assert parse_response("anthropic", None).parts == []
