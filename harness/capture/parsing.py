"""Dialect bodies → the neutral `Conversation` view (see `mcpgym.harness.capture.conversation`).

`parse_request(dialect, body)` reads an Anthropic Messages, OpenAI Chat Completions or OpenAI
Responses request; `parse_response(dialect, body)` reads a (non-streamed or reassembled) response
into the assistant `Message`.

Example:
    >>> conv = parse_request("openai-chat", {"messages": [
    ...     {"role": "system", "content": "Be brief."},
    ...     {"role": "user", "content": "hi"}],
    ...     "tools": [{"type": "function", "function": {"name": "env_guess", "parameters": {}}}]})
    >>> conv.system[0].text, conv.tool_names, [m.role for m in conv.messages]
    ('Be brief.', ['env_guess'], ['user'])
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from mcpgym.harness.capture.backend import Dialect
from mcpgym.harness.capture.conversation import (
    Conversation,
    Message,
    Part,
    ToolView,
    flatten,
    loads,
    qualify,
)

__all__ = ["parse_request", "parse_response"]


# --- Anthropic Messages ----------------------------------------------------------------------


def _anthropic_block(block: Any, src: str) -> Part:
    if isinstance(block, str):
        return Part("text", src, text=block)
    kind = block.get("type")
    if kind == "text":
        return Part("text", src, text=block.get("text", ""))
    if kind in ("tool_use", "server_tool_use"):
        return Part(
            "tool_call",
            src,
            name=block.get("name", ""),
            call_id=block.get("id", ""),
            arguments=block.get("input"),
        )
    if kind == "tool_result":
        return Part(
            "tool_result",
            src,
            text=flatten(block.get("content")),
            call_id=block.get("tool_use_id", ""),
            is_error=bool(block.get("is_error")),
        )
    if kind in ("thinking", "redacted_thinking"):
        return Part("reasoning", src, text=block.get("thinking", ""))
    if kind in ("image", "document"):
        return Part("image", src)
    return Part("other", src, text=json.dumps(block))


def _anthropic_content(content: Any, src: str) -> list[Part]:
    if isinstance(content, str):
        return [Part("text", src, text=content)]
    return [_anthropic_block(b, f"{src}[{i}]") for i, b in enumerate(content or [])]


def _anthropic_request(body: dict[str, Any]) -> Conversation:
    conv = Conversation()
    system = body.get("system")
    if system:
        conv.system = _anthropic_content(system, "system")
    for i, tool in enumerate(body.get("tools") or []):
        conv.tools.append(
            ToolView(
                tool.get("name", ""),
                tool.get("description", ""),
                tool.get("input_schema"),
                f"tools[{i}]",
            )
        )
    for i, msg in enumerate(body.get("messages") or []):
        role = "assistant" if msg.get("role") == "assistant" else "user"
        conv.messages.append(
            Message(role, _anthropic_content(msg.get("content"), f"messages[{i}].content"))
        )
    return conv


# --- OpenAI Chat Completions -----------------------------------------------------------------


def _chat_content(content: Any, src: str) -> list[Part]:
    if content is None:
        return []
    if isinstance(content, str):
        return [Part("text", src, text=content)] if content else []
    parts: list[Part] = []
    for i, item in enumerate(content):
        kind = item.get("type")
        if kind in ("text", "input_text", "output_text"):
            parts.append(Part("text", f"{src}[{i}]", text=item.get("text", "")))
        elif kind in ("image_url", "input_image", "input_audio", "file"):
            parts.append(Part("image", f"{src}[{i}]"))
        else:
            parts.append(Part("other", f"{src}[{i}]", text=json.dumps(item)))
    return parts


def _chat_message(msg: dict[str, Any], src: str) -> Message:
    role = msg.get("role")
    if role == "tool":
        part = Part(
            "tool_result",
            f"{src}.content",
            text=flatten(msg.get("content")),
            call_id=msg.get("tool_call_id", ""),
        )
        return Message("tool", [part])
    parts: list[Part] = []
    for field_name in ("reasoning_content", "reasoning"):
        if isinstance(msg.get(field_name), str) and msg[field_name]:
            parts.append(Part("reasoning", f"{src}.{field_name}", text=msg[field_name]))
    parts += _chat_content(msg.get("content"), f"{src}.content")
    for j, call in enumerate(msg.get("tool_calls") or []):
        fn = call.get("function") or {}
        parts.append(
            Part(
                "tool_call",
                f"{src}.tool_calls[{j}]",
                name=fn.get("name", ""),
                call_id=call.get("id", ""),
                arguments=loads(fn.get("arguments")),
            )
        )
    if role in ("system", "developer"):
        return Message("system", parts)
    return Message("assistant" if role == "assistant" else "user", parts)


def _chat_request(body: dict[str, Any]) -> Conversation:
    conv = Conversation()
    for i, tool in enumerate(body.get("tools") or []):
        fn = tool.get("function") or tool
        conv.tools.append(
            ToolView(
                fn.get("name", ""), fn.get("description", ""), fn.get("parameters"), f"tools[{i}]"
            )
        )
    for i, raw in enumerate(body.get("messages") or []):
        msg = _chat_message(raw, f"messages[{i}]")
        # leading system/developer messages are the system prompt; later ones stay in place
        if msg.role == "system" and not conv.messages:
            conv.system += msg.parts
        else:
            conv.messages.append(msg)
    return conv


# --- OpenAI Responses ------------------------------------------------------------------------


def _responses_item(item: Any, src: str) -> Message | None:
    if isinstance(item, str):
        return Message("user", [Part("text", src, text=item)])
    kind = item.get("type", "message")
    if kind == "message":
        role = item.get("role", "user")
        parts = _chat_content(item.get("content"), f"{src}.content")
        if role in ("system", "developer"):
            return Message("system", parts)
        return Message("assistant" if role == "assistant" else "user", parts)
    if kind in ("function_call", "custom_tool_call", "local_shell_call"):
        args = item.get("arguments", item.get("input", item.get("action")))
        part = Part(
            "tool_call",
            src,
            name=qualify(item.get("namespace"), item.get("name", kind)),
            call_id=item.get("call_id", ""),
            arguments=loads(args),
        )
        return Message("assistant", [part])
    if kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
        part = Part(
            "tool_result",
            f"{src}.output",
            text=flatten(item.get("output")),
            call_id=item.get("call_id", ""),
        )
        return Message("tool", [part])
    if kind == "reasoning":
        text = "\n".join(s.get("text", "") for s in item.get("summary") or [])
        return Message("assistant", [Part("reasoning", src, text=text)])
    return Message("user", [Part("other", src, text=json.dumps(item))])


def _responses_tools(tools: list[Any], src: str) -> list[ToolView]:
    views: list[ToolView] = []
    for i, tool in enumerate(tools):
        if tool.get("type") == "namespace":  # Codex groups MCP tools: {"name": "mcp__env", "tools"}
            namespace = tool.get("name", "")
            for view in _responses_tools(tool.get("tools") or [], f"{src}[{i}].tools"):
                views.append(replace(view, name=qualify(namespace, view.name), namespace=namespace))
            continue
        name = tool.get("name") or tool.get("type", "")
        schema = tool.get("parameters", tool.get("format"))
        views.append(ToolView(name, tool.get("description", ""), schema, f"{src}[{i}]"))
    return views


def _responses_request(body: dict[str, Any]) -> Conversation:
    conv = Conversation(tools=_responses_tools(body.get("tools") or [], "tools"))
    if body.get("instructions"):
        conv.system.append(Part("text", "instructions", text=str(body["instructions"])))
    items = body.get("input")
    if isinstance(items, str):
        items = [items]
        conv.messages.append(Message("user", [Part("text", "input", text=body["input"])]))
        return conv
    for i, item in enumerate(items or []):
        msg = _responses_item(item, f"input[{i}]")
        if msg is None:
            continue
        # consecutive assistant items (reasoning, text, calls) are one assistant turn
        if msg.role == "assistant" and conv.messages and conv.messages[-1].role == "assistant":
            conv.messages[-1].parts += msg.parts
        elif msg.role == "system" and not conv.messages:
            conv.system += msg.parts
        else:
            conv.messages.append(msg)
    return conv


def parse_request(dialect: Dialect, body: dict[str, Any]) -> Conversation:
    """The neutral view of a request body in `dialect`."""
    if dialect == "anthropic":
        return _anthropic_request(body)
    if dialect == "openai-chat":
        return _chat_request(body)
    return _responses_request(body)


def parse_response(dialect: Dialect, body: dict[str, Any] | None) -> Message:
    """The assistant message of a response body (empty for an error or a missing body)."""
    out = Message("assistant")
    if not body:
        return out
    if dialect == "anthropic":
        out.parts = _anthropic_content(body.get("content") or [], "content")
    elif dialect == "openai-chat":
        choices = body.get("choices") or [{}]
        out.parts = _chat_message(choices[0].get("message") or {}, "choices[0].message").parts
    else:
        for i, item in enumerate(body.get("output") or []):
            msg = _responses_item(item, f"output[{i}]")
            if msg is not None:
                out.parts += msg.parts
    return out
