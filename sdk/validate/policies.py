"""Playing episodes for validation: task specs, agents, scripted and degenerate policies.

An agent here is anything with the evaluation runner's shape — `start(spec, tools)` returning an
episode whose `act(result)` gives the next action (an `Action` or its wire dict) or `None` — so
the oracles and baselines written for `mcpgym eval` serve as they are. The validator drives them
itself over a raw `/ws` session (`wire.Session`), recording every frame.

Degenerate policies, the floor the maximum must stand clear of: `empty_calls` (each answering
tool once with empty strings, zeros, empty lists — and every value of each enum argument, which
is "finish at once with every declared status"), `random_calls` (one schema-valid random call).

Example:
    >>> empty_arguments({"type": "object", "required": ["s", "n"],
    ...     "properties": {"s": {"type": "string"}, "n": {"type": "integer", "minimum": 3}}})
    {'s': '', 'n': 3}
    >>> [a["status"] for a in enum_variants({"type": "object", "required": ["status"],
    ...     "properties": {"status": {"enum": ["done", "stuck"]}}})]
    ['done', 'stuck']
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcpgym.types import Action, ToolInfo
from mcpgym.validate.wire import Session, WireError, step_result

__all__ = [
    "Spec",
    "Trajectory",
    "empty_arguments",
    "enum_variants",
    "hostile_frames",
    "play",
    "random_arguments",
    "scripted",
]


@dataclass(frozen=True)
class Spec:
    """An episode to play; the same attribute names as the runner's `EpisodeSpec`."""

    id: str
    reset: Mapping[str, Any]
    prompt: str = ""
    max_steps: int = 20
    tags: Mapping[str, str] = field(default_factory=dict)
    data: Mapping[str, Any] = field(default_factory=dict)

    @property
    def seed(self) -> int | None:
        s = self.reset.get("seed")
        return s if isinstance(s, int) else None


@dataclass
class Trajectory:
    """One played episode: the actions sent, the raw reply frames, and what went wrong."""

    spec_id: str
    reset_frame: dict[str, Any] = field(default_factory=dict)
    actions: list[dict[str, Any]] = field(default_factory=list)
    frames: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    @property
    def rewards(self) -> list[Any]:
        """Each step's raw reward, as sent."""
        return [(f.get("data") or {}).get("reward") for f in self.frames]

    @property
    def done(self) -> bool:
        return bool(self.frames) and bool((self.frames[-1].get("data") or {}).get("done"))

    def score(self, how: str = "final") -> float:
        """The episode's score: the last numeric reward (`final`) or their sum; 0 without any."""
        nums = [float(r) for r in self.rewards if isinstance(r, int | float)]
        if not nums:
            return 0.0
        value = sum(nums) if how == "sum" else nums[-1]
        return value if math.isfinite(value) else float("nan")

    def observations(self) -> list[Any]:
        """The observations (without rewards): what a deterministic world must repeat."""
        out: list[Any] = [(self.reset_frame.get("data") or {}).get("observation")]
        for f in self.frames:
            d = f.get("data") or {}
            out.append((f.get("type"), d.get("observation", d.get("code")), d.get("done")))
        return out


def tools_of(session: Session) -> list[ToolInfo]:
    """The session's tools through MCP `tools/list` (not a step)."""
    reply = session.mcp("tools/list")
    tools = ((reply.get("data") or {}).get("result") or {}).get("tools") or []
    return [
        ToolInfo(
            name=t["name"],
            description=t.get("description") or "",
            input_schema=t.get("inputSchema") or {"type": "object"},
        )
        for t in tools
    ]


def _wire_action(action: Any) -> dict[str, Any]:
    if isinstance(action, Action):
        return action.model_dump(mode="json", exclude={"metadata"})
    return dict(action)


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def play(
    session: Session,
    agent: Any,
    spec: Spec,
    *,
    step_timeout: float,
    reset_timeout: float = 30.0,
    tools: list[ToolInfo] | None = None,
) -> Trajectory:
    """Reset `session` with `spec.reset` and let `agent` act until done, `None` or max steps.

    `tools` is what the agent is given (default: the session's `tools/list` after the reset;
    a caller replaying scripts on one server passes the listing it read once)."""
    traj = Trajectory(spec_id=spec.id)
    try:
        traj.reset_frame = session.reset(timeout=reset_timeout, **dict(spec.reset))
        if traj.reset_frame.get("type") != "observation":
            traj.error = f"reset answered {traj.reset_frame.get('type')}: {traj.reset_frame}"
            return traj
        if tools is None:
            tools = tools_of(session)
    except WireError as exc:
        traj.error = f"reset: {exc}"
        return traj

    async def drive() -> None:
        episode = await _maybe(agent.start(spec, tools))
        result = step_result(traj.reset_frame)
        try:
            for _ in range(spec.max_steps):
                action = await _maybe(episode.act(result))
                if action is None:
                    return
                wire = _wire_action(action)
                traj.actions.append(wire)
                frame = session.step(wire, timeout_s=step_timeout)
                traj.frames.append(frame)
                if frame.get("type") != "observation":
                    traj.error = f"step answered {frame.get('type')}: {frame.get('data')}"
                    return
                err = ((frame.get("data") or {}).get("observation") or {}).get("error") or {}
                if isinstance(err, dict) and err.get("error_type") == "timeout":
                    # a timed-out sync tool keeps the instance busy: nothing more can run here
                    traj.error = "a step timed out"
                    return
                result = step_result(frame)
                if result.done:
                    return
        finally:
            close = getattr(episode, "aclose", None)
            if close is not None:
                await _maybe(close())

    try:
        asyncio.run(drive())
    except WireError as exc:
        traj.error = f"step: {exc}"
    return traj


class _Script:
    def __init__(self, actions: list[dict[str, Any]]) -> None:
        self._left = list(actions)

    async def act(self, result: Any) -> dict[str, Any] | None:
        return self._left.pop(0) if self._left else None


class scripted:
    """A policy that sends fixed actions, then stops (replay, probes, degenerate calls)."""

    name = "scripted"

    def __init__(self, actions: list[dict[str, Any]]) -> None:
        self.actions = [dict(a) for a in actions]

    def start(self, spec: Any, tools: Any) -> _Script:
        return _Script(self.actions)


def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A `call_tool` wire action."""
    return {"type": "call_tool", "tool_name": tool, "arguments": arguments}


# -- arguments from a JSON Schema ------------------------------------------------------------------


def _props(schema: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    return dict(schema.get("properties") or {}), list(schema.get("required") or [])


def _empty(s: Mapping[str, Any]) -> Any:
    if "enum" in s:
        return s["enum"][0]
    if "const" in s:
        return s["const"]
    for key in ("anyOf", "oneOf"):
        if key in s:
            return _empty(s[key][0])
    t = s.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "null")
    if t == "string":
        return ""
    if t in ("integer", "number"):
        low = s.get("minimum", s.get("exclusiveMinimum"))
        return low if low is not None else 0
    if t == "boolean":
        return False
    if t == "array":
        return []
    if t == "object":
        return empty_arguments(s)
    return None


def empty_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Required arguments at their emptiest: "", 0 (or the minimum), False, [], {}."""
    props, required = _props(schema)
    return {k: _empty(props.get(k, {})) for k in required}


def enum_variants(schema: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """`empty_arguments`, once per value of each enum argument (every declared status)."""
    props, required = _props(schema)
    base = empty_arguments(schema)
    seen = False
    for k in required:
        values = props.get(k, {}).get("enum")
        for v in values or []:
            seen = True
            yield {**base, k: v}
    if not seen:
        yield base


def random_arguments(schema: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """Schema-valid random values for the required arguments."""
    props, required = _props(schema)
    return {k: _random(props.get(k, {}), rng) for k in required}


def _random(s: Mapping[str, Any], rng: random.Random) -> Any:
    if "enum" in s:
        return rng.choice(list(s["enum"]))
    if "const" in s:
        return s["const"]
    for key in ("anyOf", "oneOf"):
        if key in s:
            return _random(rng.choice(list(s[key])), rng)
    t = s.get("type")
    if isinstance(t, list):
        t = rng.choice([x for x in t if x != "null"] or ["null"])
    if t == "string":
        n = rng.randint(max(1, int(s.get("minLength", 1))), max(1, int(s.get("minLength", 1))) + 7)
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n))
    if t == "integer":
        low = int(s.get("minimum", 0))
        return rng.randint(low, int(s.get("maximum", low + 100)))
    if t == "number":
        low = float(s.get("minimum", 0))
        return round(rng.uniform(low, float(s.get("maximum", low + 100))), 3)
    if t == "boolean":
        return rng.random() < 0.5
    if t == "array":
        return [_random(s.get("items") or {}, rng) for _ in range(int(s.get("minItems", 0)))]
    if t == "object":
        return random_arguments(s, rng)
    return None


def hostile_frames(tools: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Malformed frames and calls, named: every one must get a structured error, never a crash."""
    cases = [
        ("not JSON", "{nope"),
        ("a JSON array", "[1, 2]"),
        ("unknown frame type", json.dumps({"type": "explode"})),
        ("unknown action type", json.dumps({"type": "step", "data": {"type": "explode"}})),
        ("action not an object", json.dumps({"type": "step", "data": [1]})),
        ("call without tool_name", json.dumps({"type": "step", "data": {"type": "call_tool"}})),
        ("unknown tool", json.dumps({"type": "step", "data": call("__no_such_tool__", {})})),
    ]
    for t in tools:
        name = t["name"]
        args = {"type": "step", "data": {"type": "call_tool", "tool_name": name, "arguments": 7}}
        cases.append((f"{name}: arguments not an object", json.dumps(args)))
        props = (t.get("inputSchema") or {}).get("properties") or {}
        if props:
            wrong = {
                k: ({"x": [1]} if v.get("type") != "object" else "x") for k, v in props.items()
            }
            data = {"type": "step", "data": call(name, wrong)}
            cases.append((f"{name}: wrong types", json.dumps(data)))
        if (t.get("inputSchema") or {}).get("additionalProperties") is False:
            data = {"type": "step", "data": call(name, {"__bogus__": 1})}
            cases.append((f"{name}: unknown argument", json.dumps(data)))
    return cases
