"""Chat-completions message shapes for `LLMAgent`, built so that every mainstream
OpenAI-compatible server accepts them (OpenAI, vLLM, llama.cpp, Ollama).

Conventions that differ between servers, and the choice made here:

- An assistant turn that carries `tool_calls` has `"content": ""`, never `null` and never a
  missing key: llama.cpp's server answers HTTP 500 to both, OpenAI and vLLM accept `""`.
- A tool call's `arguments` is sent back as a JSON *string* (the OpenAI shape); servers that
  parsed it into an object (Ollama) get it re-encoded.
- Every tool call has an `id` and `"type": "function"`; a server that omitted them gets them
  filled in, so the `tool` message that answers the call can name it.
- A `tool` message's `content` is always a string.

Example:
    >>> assistant_message({"content": None, "tool_calls": [
    ...     {"function": {"name": "f", "arguments": {"a": 1}}}]}, turn=0)["content"]
    ''
    >>> compact_schema({"type": "object", "title": "Args", "properties": {
    ...     "q": {"type": "string", "title": "Q", "description": "Text. More detail."}}})
    {'type': 'object', 'properties': {'q': {'type': 'string', 'description': 'Text.'}}}
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from mcpgym.types import CallToolObservation, Observation, ToolInfo

__all__ = [
    "assistant_message",
    "compact_schema",
    "normalized_calls",
    "openai_tools",
    "parse_arguments",
    "tool_content",
]

_VALID_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_DROP_KEYS = frozenset({"title", "examples", "$comment", "deprecated", "readOnly", "writeOnly"})
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_ABBREVIATIONS = ("e.g", "i.e", "etc", "vs", "cf")


def _function_name(name: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:60] or "tool"
    candidate, i = base, 1
    while candidate in taken:
        candidate, i = f"{base}_{i}", i + 1
    return candidate


def _short(text: str) -> str:
    """The first sentence of `text` (a period after an abbreviation such as "e.g." is not an
    end)."""
    text = text.strip()
    for match in _SENTENCE_END.finditer(text):
        head = text[: match.start()]
        if not head.lower().endswith(_ABBREVIATIONS):
            return text[: match.end()]
    return text


def _without_null(options: list[Any]) -> Any | None:
    """`X` for an `anyOf: [X, {"type": "null"}]` (either order), else None."""
    if len(options) != 2:
        return None
    rest = [o for o in options if o != {"type": "null"}]
    return rest[0] if len(rest) == 1 else None


def compact_schema(schema: Any) -> Any:
    """A smaller JSON Schema for the model to read: titles, examples, comments and `x-`
    annotations are dropped, every description is cut to its first sentence, and an optional
    `anyOf: [X, null]` with a null default becomes plain `X` (omitting the field means the
    same). Every value it accepts the full schema accepts, and the keywords that constrain
    values (types, enums, bounds, `required`, `$ref`, `additionalProperties`) are kept, so a
    model reading it makes the same calls; the environment still validates with the full one."""
    if isinstance(schema, list):
        return [compact_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    options = schema.get("anyOf")
    inner = _without_null(options) if isinstance(options, list) else None
    if inner is not None and schema.get("default", None) is None:
        merged = {k: v for k, v in schema.items() if k not in ("anyOf", "default")}
        return compact_schema({**inner, **merged})
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _DROP_KEYS or key.startswith("x-"):
            continue
        if key == "description" and isinstance(value, str):
            out[key] = _short(value)
        elif key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(
            value, dict
        ):
            # names here are property names, not keywords: keep them all
            out[key] = {name: compact_schema(sub) for name, sub in value.items()}
        else:
            out[key] = compact_schema(value)
    return out


def openai_tools(tools: Sequence[ToolInfo], *, compact: bool = False) -> list[dict[str, Any]]:
    """The tools as OpenAI `{"type": "function", "function": {...}}` entries (same order).

    Valid names are kept; others are made valid without colliding with any kept name. With
    `compact`, descriptions are cut to their first sentence and schemas compacted
    (`compact_schema`): a smaller prompt for the same tools.

    Example:
        >>> openai_tools([ToolInfo(name="calendar.find", input_schema={"type": "object"})])[0][
        ...     "function"]["name"]
        'calendar_find'
    """
    taken = {t.name for t in tools if _VALID_NAME.match(t.name)}
    out: list[dict[str, Any]] = []
    for tool in tools:
        if _VALID_NAME.match(tool.name):
            name = tool.name
        else:
            name = _function_name(tool.name, taken)
            taken.add(name)
        description = tool.description or tool.name
        parameters = tool.input_schema or {"type": "object", "properties": {}}
        if compact:
            description, parameters = _short(description), compact_schema(parameters)
        function = {"name": name, "description": description, "parameters": parameters}
        out.append({"type": "function", "function": function})
    return out


def parse_arguments(raw: Any) -> tuple[str | None, dict[str, Any]]:
    """`(problem, arguments)` for a tool call's raw `arguments`; `problem` is None when they are
    a JSON object (or empty)."""
    if raw is None or raw == "":
        return None, {}
    if isinstance(raw, dict):
        return None, raw
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError as exc:
        return f"arguments are not valid JSON ({exc}): {str(raw)[:200]}", {}
    if not isinstance(value, dict):
        return f"arguments must be a JSON object, got {type(value).__name__}", {}
    return None, value


def normalized_calls(calls: Sequence[Any], turn: int) -> list[dict[str, Any]]:
    """The model's tool calls in the OpenAI shape, with ids and string arguments."""
    out: list[dict[str, Any]] = []
    for i, call in enumerate(calls):
        call = call if isinstance(call, dict) else {}
        function = call.get("function") if isinstance(call.get("function"), dict) else {}
        arguments = function.get("arguments")
        if arguments is None:
            arguments = ""
        elif not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        out.append(
            {
                "id": str(call.get("id") or f"call_{turn}_{i}"),
                "type": "function",
                "function": {"name": str(function.get("name", "")), "arguments": arguments},
            }
        )
    return out


def assistant_message(message: dict[str, Any], *, turn: int) -> dict[str, Any]:
    """The model's answer as it goes back into the conversation (see the module docstring)."""
    content = message.get("content")
    out: dict[str, Any] = {
        "role": "assistant",
        "content": content if isinstance(content, str) else "",
    }
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        out["tool_calls"] = normalized_calls(calls, turn)
    return out


def tool_content(obs: Observation) -> str:
    """A tool message's content: the result, or `{"error": {...}}` (always a string)."""
    if isinstance(obs, CallToolObservation):
        if obs.error is not None:
            return json.dumps({"error": obs.error.model_dump(mode="json")})
        result = obs.result
        return result if isinstance(result, str) else json.dumps(result)
    return json.dumps(obs.model_dump(mode="json", exclude={"reward"}))
