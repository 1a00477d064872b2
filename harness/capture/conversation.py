"""A dialect-neutral view of model requests and responses: a `Conversation` is a system prompt,
the offered tools (`ToolView`) and `Message`s made of `Part`s. `mcpgym.harness.capture.parsing`
builds them from each dialect's bodies. Each part remembers where it came from (`source`, a JSON
path into the body), so a segmentation can point back at the bytes the model saw.

Example:
    >>> msg = Message("assistant", [Part("text", "content[0]", text="Let me guess."),
    ...                             Part("tool_call", "content[1]", name="mcp__env__guess")])
    >>> msg.text, [p.name for p in msg.tool_calls], qualify("mcp__env", "guess")
    ('Let me guess.', ['mcp__env__guess'], 'mcp__env__guess')
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Conversation", "Message", "Part", "ToolView", "flatten", "loads", "qualify"]

PartKind = Literal["text", "tool_call", "tool_result", "reasoning", "image", "other"]
Role = Literal["system", "user", "assistant", "tool"]


@dataclass(slots=True)
class Part:
    """One piece of a message. `arguments` is the parsed tool-call input (a dict when it parses)."""

    kind: PartKind
    source: str
    text: str = ""
    name: str = ""
    call_id: str = ""
    arguments: Any = None
    is_error: bool = False


@dataclass(slots=True)
class Message:
    role: Role
    parts: list[Part] = field(default_factory=list[Part])

    @property
    def text(self) -> str:
        """The message's text parts joined by newlines."""
        return "\n".join(p.text for p in self.parts if p.kind == "text")

    @property
    def tool_calls(self) -> list[Part]:
        return [p for p in self.parts if p.kind == "tool_call"]


@dataclass(slots=True)
class ToolView:
    """An offered tool. `name` is qualified: a tool inside a Responses `namespace` tool (Codex
    puts each MCP server's tools in one, `mcp__<server>`) is `<namespace>__<bare>`, the name
    Codex itself reports; `bare` and `namespace` keep the parts a function call must carry."""

    name: str
    description: str
    schema: Any
    source: str
    namespace: str = ""

    @property
    def bare(self) -> str:
        return self.name.removeprefix(f"{self.namespace}__") if self.namespace else self.name


def qualify(namespace: str | None, name: str) -> str:
    """`mcp__env` + `guess` → `mcp__env__guess` (a name without namespace stays as it is)."""
    return f"{namespace}__{name}" if namespace else name


@dataclass(slots=True)
class Conversation:
    system: list[Part] = field(default_factory=list[Part])
    tools: list[ToolView] = field(default_factory=list[ToolView])
    messages: list[Message] = field(default_factory=list[Message])

    @property
    def tool_names(self) -> list[str]:
        return [t.name for t in self.tools]

    def tool(self, name: str) -> ToolView | None:
        """The offered tool with this (qualified) name."""
        return next((t for t in self.tools if t.name == name), None)

    @property
    def assistant_turns(self) -> int:
        """How many assistant messages the history already holds (a stateless turn counter)."""
        return sum(1 for m in self.messages if m.role == "assistant")


def loads(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return arguments
    return arguments


def flatten(content: Any) -> str:
    """Text of a tool result / content that may be a string or a list of typed blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            flatten(c.get("text", c.get("content", ""))) for c in content if isinstance(c, dict)
        ]
        return "\n".join(t for t in texts if t)
    return "" if content is None else json.dumps(content)
