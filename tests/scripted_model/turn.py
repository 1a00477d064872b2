"""One scripted model answer, resolved and ready to render in any dialect."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call with its final (harness-specific) tool name and a call id. `namespace` is set
    for a tool offered inside a Responses `namespace` tool (Codex's MCP tools): the call then
    carries the bare `name` plus `namespace`."""

    id: str
    name: str
    arguments: dict[str, Any]
    namespace: str = ""

    @property
    def arguments_json(self) -> str:
        return json.dumps(self.arguments)


@dataclass(frozen=True, slots=True)
class Turn:
    """What the model says in one response: text and/or tool calls, plus the ids and token counts
    the renderers need."""

    id: str
    model: str
    text: str = ""
    calls: list[Call] = field(default_factory=list[Call])
    input_tokens: int = 1
    output_tokens: int = 1
    created: int = 1_767_225_600  # 2026-01-01, fixed so recordings are stable


def chunks(text: str, size: int = 12) -> list[str]:
    """Split `text` into stream deltas (at least one, so empty text still yields a delta)."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
