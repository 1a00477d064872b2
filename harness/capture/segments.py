"""Role segmentation of one recorded model call.

Every piece of text the model saw or produced in a call gets one of four roles:

- `context` — what the model was given: system prompt, tool specs, user messages, its own earlier
  turns (as they were sent back to it);
- `action` — what the model produced in this call: text, tool calls, reasoning;
- `env_output` — tool results coming back from the environment (or any tool);
- `warning` — harness boilerplate: `<system-reminder>` blocks, `<environment_context>` blocks,
  wrappers a harness puts around tool output (`Wall time: … Output:`), `<tool_use_error>` tags.

Within one part, segments concatenate back to the part's exact text, so a tokenizer can align
them. Boilerplate is recognised by `BOILERPLATE` (a list of compiled patterns; extend it for a new
harness).

Example:
    >>> segs = segment_call({"dialect": "anthropic", "request": {"messages": [{"role": "user",
    ...     "content": "<system-reminder>be nice</system-reminder>Guess."}]},
    ...     "response": {"content": [{"type": "text", "text": "50"}]}})
    >>> [(s.role, s.text) for s in segs]  # doctest: +NORMALIZE_WHITESPACE
    [('warning', '<system-reminder>be nice</system-reminder>'), ('context', 'Guess.'),
     ('action', '50')]
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel

from mcpgym.harness.capture.backend import Dialect
from mcpgym.harness.capture.conversation import Part
from mcpgym.harness.capture.parsing import parse_request, parse_response
from mcpgym.harness.capture.records import LLMCall

__all__ = ["BOILERPLATE", "CODEX_BLOCKS", "Role", "Segment", "segment_call", "split_boilerplate"]

Role = Literal["context", "action", "env_output", "warning"]

CODEX_BLOCKS = (
    "environment_context", "user_instructions", "permissions instructions", "skills_instructions",
    "plugins_instructions", "apps_instructions", "catalog_apps_instructions",
    "environments_instructions", "collaboration_mode", "multi_agent_mode", "persistent_mode",
    "startup_context", "managed_developer_instructions", "codex_internal_context",
)  # fmt: skip
"""Tags of the blocks Codex inserts into the conversation (seen in its 0.171 binary)."""

BOILERPLATE: list[re.Pattern[str]] = [
    # Claude Code: reminders in user messages and appended to tool results
    re.compile(r"\s*<system-reminder>.*?</system-reminder>\s*", re.DOTALL),
    # Codex: tagged blocks it inserts as developer / user messages
    re.compile(
        r"\s*<(" + "|".join(CODEX_BLOCKS) + r")>.*?</\1>\s*",
        re.DOTALL,
    ),
    re.compile(r"^# AGENTS\.md instructions for .*?</INSTRUCTIONS>\s*", re.DOTALL),
    # Codex: the header of every tool output
    re.compile(
        r"^(?:(?:Chunk ID|Wall time|Process exited with code|Original token count|Exit code)"
        r"[^\n]*\n)+Output:\n"
    ),
    # Claude Code: error wrapper tags (the message between them is the tool's output)
    re.compile(r"</?tool_use_error>"),
]


class Segment(BaseModel):
    """One labelled piece of a call.

    `source` points into the call (`request.messages[2].content[0]`, `response.content[1]`,
    `request.tools[3]`); `kind` says what the part was (`system`, `tool_spec`, `user`,
    `assistant`, `tool_call`, `tool_result`, `reasoning`, `other`); `tool` names the tool of a
    tool call or result when known.
    """

    role: Role
    text: str
    source: str
    kind: str
    tool: str | None = None


def split_boilerplate(text: str) -> list[tuple[bool, str]]:
    """`[(is_boilerplate, piece), ...]`, pieces in order and concatenating to `text`."""
    spans: list[tuple[int, int]] = []
    for pattern in BOILERPLATE:
        for match in pattern.finditer(text):
            if match.end() > match.start():
                spans.append((match.start(), match.end()))
    spans.sort()
    pieces: list[tuple[bool, str]] = []
    pos = 0
    for start, end in spans:
        start = max(start, pos)  # overlapping matches: the earlier one wins
        if end <= start:
            continue
        if start > pos:
            pieces.append((False, text[pos:start]))
        pieces.append((True, text[start:end]))
        pos = end
    if pos < len(text):
        pieces.append((False, text[pos:]))
    return pieces


def _call_text(part: Part) -> str:
    args = part.arguments
    return json.dumps({"name": part.name, "arguments": args}, ensure_ascii=False)


def _part_segments(
    part: Part, role: Role, kind: str, prefix: str, tools_by_id: Mapping[str, str]
) -> list[Segment]:
    source = f"{prefix}.{part.source}"
    if part.kind == "tool_call":
        return [
            Segment(
                role=role, text=_call_text(part), source=source, kind="tool_call", tool=part.name
            )
        ]
    if part.kind == "reasoning":
        return [Segment(role=role, text=part.text, source=source, kind="reasoning")]
    if part.kind == "tool_result":
        tool = tools_by_id.get(part.call_id)
        base: Role = "env_output"
        kind = "tool_result"
    else:
        tool, base = None, role
        kind = kind if part.kind == "text" else part.kind
    if role == "action":  # the model's own output is never boilerplate
        return [Segment(role=role, text=part.text, source=source, kind=kind)]
    return [
        Segment(role="warning" if boiler else base, text=piece, source=source, kind=kind, tool=tool)
        for boiler, piece in split_boilerplate(part.text)
        if piece
    ]


def segment_call(
    call: LLMCall | Mapping[str, Any], dialect: Dialect | None = None
) -> list[Segment]:
    """Label everything in one recorded call: the request (system, tools, messages) in order, then
    the response. `call` is an `LLMCall` or its dict form (as stored in a trajectory record)."""
    data: Mapping[str, Any] = call.model_dump() if isinstance(call, LLMCall) else call
    resolved: Dialect = dialect or data["dialect"]
    request = parse_request(resolved, dict(data.get("request") or {}))
    tools_by_id = {
        p.call_id: p.name for m in request.messages for p in m.parts if p.kind == "tool_call"
    }
    out: list[Segment] = []
    for part in request.system:
        out += _part_segments(part, "context", "system", "request", tools_by_id)
    for tool in request.tools:
        spec = {"name": tool.name, "description": tool.description, "parameters": tool.schema}
        out.append(
            Segment(
                role="context",
                text=json.dumps(spec, ensure_ascii=False),
                source=f"request.{tool.source}",
                kind="tool_spec",
                tool=tool.name,
            )
        )
    for message in request.messages:
        kind = "assistant" if message.role == "assistant" else message.role
        for part in message.parts:
            out += _part_segments(part, "context", kind, "request", tools_by_id)
    response = parse_response(resolved, data.get("response"))
    for part in response.parts:
        out += _part_segments(part, "action", "assistant", "response", tools_by_id)
    return out
