"""`ScriptedModel`: a fake model that plays a fixed script, for driving real agent CLIs in tests.

The step to play is read from the conversation itself: a request whose history already holds
*n* assistant messages gets step *n*. That is stateless (a retried request gets the same answer)
and survives harnesses that run several conversations in one episode. Requests that offer no
tools at all (Claude Code's title and topic side-calls) are *side requests*: they get
`side_text`, do not advance the script, and are recorded apart.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from mcpgym.harness.capture import (
    BackendError,
    Conversation,
    ModelRequest,
    Reply,
    error_body,
    parse_request,
)
from scripted_model import render_anthropic, render_chat, render_responses
from scripted_model.turn import Call, Turn

Picker = Callable[[str, Sequence[str]], str]
"""`pick(short_name, offered_names) -> offered name` — how a harness spells an MCP tool."""


def pick_tool(short: str, offered: Sequence[str]) -> str:
    """The offered tool that is `short` itself or `short` behind a harness prefix: `mcp__env__x`
    (Claude Code), `env_x` (OpenCode), `mcp__env__x` / `env__x` (Codex). Raises `LookupError`
    when none or several match."""
    if short in offered:
        return short
    found = [n for n in offered if any(n.endswith(sep + short) for sep in ("__", "_", ".", "/"))]
    if len(found) != 1:
        raise LookupError(f"{len(found)} offered tools match {short!r}: {sorted(offered)}")
    return found[0]


@dataclass(frozen=True, slots=True)
class ToolCall:
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict[str, Any])


@dataclass(frozen=True, slots=True)
class Say:
    """One scripted answer: optional text, then tool calls (by short name)."""

    text: str = ""
    calls: tuple[ToolCall, ...] = ()


def say(text: str) -> Say:
    """A final text answer (ends the harness's turn)."""
    return Say(text=text)


def call(tool: str, arguments: dict[str, Any] | None = None, *, text: str = "") -> Say:
    """A tool call (optionally after some text); `tool` is the short name, e.g. `"guess"`."""
    return Say(text=text, calls=(ToolCall(tool, arguments or {}),))


@dataclass(frozen=True, slots=True)
class StepContext:
    """What a callable step sees."""

    request: ModelRequest
    conversation: Conversation
    step: int

    @property
    def last_tool_result(self) -> str:
        """Text of the newest tool result in the history ("" when there is none)."""
        for message in reversed(self.conversation.messages):
            for part in reversed(message.parts):
                if part.kind == "tool_result":
                    return part.text
        return ""


Step = Say | Callable[[StepContext], Say]


class ScriptedModel:
    """A proxy backend (`CaptureProxy(backend=model)`) that plays `script` for every episode key
    (or a per-key script from `set_script`). Past the end of the script it answers `done_text`.

    Records: `requests(key)` (scripted requests, oldest first), `side_requests(key)`, and
    `errors` (script problems, also answered to the harness as a 400).
    """

    def __init__(
        self,
        script: Sequence[Step] = (),
        *,
        pick: Picker = pick_tool,
        side_text: str = "Scripted session",
        done_text: str = "(the script has ended)",
    ) -> None:
        self.script = list(script)
        self.pick, self.side_text, self.done_text = pick, side_text, done_text
        self.errors: list[str] = []
        self._scripts: dict[str, list[Step]] = {}
        self._requests: defaultdict[str, list[ModelRequest]] = defaultdict(list)
        self._side: defaultdict[str, list[ModelRequest]] = defaultdict(list)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def set_script(self, key: str, script: Sequence[Step]) -> None:
        """Play `script` for the episode of `key` instead of the default one."""
        self._scripts[key] = list(script)

    def requests(self, key: str) -> list[ModelRequest]:
        with self._lock:
            return list(self._requests.get(key, []))

    def side_requests(self, key: str) -> list[ModelRequest]:
        with self._lock:
            return list(self._side.get(key, []))

    async def __call__(self, request: ModelRequest) -> Reply:
        conversation = parse_request(request.dialect, request.body)
        side = not conversation.tools
        with self._lock:
            (self._side if side else self._requests)[request.key].append(request)
            n = next(self._ids)
        if side:
            answer = Say(text=self.side_text)
        else:
            step = conversation.assistant_turns
            script = self._scripts.get(request.key, self.script)
            planned = script[step] if step < len(script) else say(self.done_text)
            try:
                answer = (
                    planned
                    if isinstance(planned, Say)
                    else planned(StepContext(request, conversation, step))
                )
            except Exception as exc:  # a broken step is the test's bug: say so loudly
                self._fail(request, f"step {step} raised {exc!r}")
        turn = self._turn(request, conversation, answer, n)
        return _render(request, turn)

    def _turn(self, request: ModelRequest, conv: Conversation, answer: Say, n: int) -> Turn:
        calls: list[Call] = []
        for i, planned in enumerate(answer.calls):
            try:
                name = self.pick(planned.tool, conv.tool_names)
            except LookupError as exc:
                self._fail(request, str(exc))
            prefix = "toolu_" if request.dialect == "anthropic" else "call_"
            call_id = f"{prefix}scripted_{n:04d}_{i}"
            view = conv.tool(name)
            if view is not None and view.namespace:
                calls.append(Call(call_id, view.bare, planned.arguments, view.namespace))
            else:
                calls.append(Call(call_id, name, planned.arguments))
        out_chars = len(answer.text) + sum(len(c.arguments_json) for c in calls)
        return Turn(
            id=_turn_id(request, n),
            model=request.model or "scripted",
            text=answer.text,
            calls=calls,
            input_tokens=_estimate_input_tokens(request.body),
            output_tokens=max(1, out_chars // 4),
        )

    def _fail(self, request: ModelRequest, message: str) -> NoReturn:
        self.errors.append(message)
        raise BackendError(400, error_body(request.dialect, 400, f"scripted model: {message}"))


def _estimate_input_tokens(body: dict[str, Any]) -> int:
    """~4 characters a token, over what the model reads (so a streamed and a non-streamed copy
    of one request count the same)."""
    seen = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
    return max(1, len(json.dumps(seen)) // 4)


def _turn_id(request: ModelRequest, n: int) -> str:
    if request.dialect == "anthropic":
        return f"msg_scripted_{n:04d}"
    if request.dialect == "openai-chat":
        return f"chatcmpl-scripted-{n:04d}"
    return f"scripted_{n:04d}"


def _render(request: ModelRequest, turn: Turn) -> Reply:
    if request.dialect == "anthropic":
        return render_anthropic.events(turn) if request.stream else render_anthropic.body(turn)
    if request.dialect == "openai-chat":
        if not request.stream:
            return render_chat.body(turn)
        usage = bool((request.body.get("stream_options") or {}).get("include_usage"))
        return render_chat.events(turn, include_usage=usage)
    if request.stream:
        return render_responses.events(turn, request.body)
    return render_responses.body(turn, request.body)
