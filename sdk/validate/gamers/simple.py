"""The gamers that need nothing declared: constant finishers, try-then-finish, random calls,
replays of another task's oracle plan, and the error exploit.

Each gamer is a function `(episodes, episode) -> Trajectory | None` (None: it does not apply
to that episode). Gamers never read the answer: they read the tool list, the oracle's actions
on *other* tasks (replay), the oracle's calls without its finish (try-then: "the request"),
and what the environment answers them.

- `constant:VALUE` finishes at once with the finishing tool's argument at VALUE (every enum
  value of it); `constant:null` plays the manifest's null policy (or no action) and
  `constant:empty` calls each finishing tool at once with empty arguments (the best variant);
- `try-then:VALUE` plays the request — the oracle's calls without its finish, and for a trap
  with a twin the twin's calls (the write the request asks for) — then finishes with VALUE
  whatever happened;
- `random` makes up to 10 schema-valid random calls (strings often taken from earlier
  results), then finishes with a random value;
- `replay` plays the oracle's actions of another task of the same template;
- `error-exploit` sends each tool of the request mistyped, missing, random and empty
  arguments, then follows what the errors suggest (an example argument set, a quoted value
  that is not an echo of what it sent) and finishes with the suggested values (the best of its
  finishing variants, up to three suggested values).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from mcpgym.validate.gamers.table import Episode, Episodes, strings
from mcpgym.validate.policies import (
    Trajectory,
    call,
    empty_arguments,
    enum_variants,
    random_arguments,
)

__all__ = ["Gamer", "simple_gamers"]

Gamer = Callable[[Episodes, Episode], Trajectory | None]

_QUOTED = re.compile(r"'([^'\s]{1,80})'|\"([^\"\s]{1,80})\"")
_RANDOM_CALLS = 10
_SCHEMA_KEYS = frozenset({"input_schema", "inputSchema", "properties", "$defs", "schema"})


def _finish_calls(eps: Episodes, value: Any = None) -> list[dict[str, Any]]:
    """A call of the finishing tool per variant (or with `argument=value` only)."""
    out = []
    for t in eps.tools:
        if t["name"] not in eps.finishing:
            continue
        schema = t.get("inputSchema") or {}
        if value is not None and eps.finish is not None and t["name"] == eps.finish.tool:
            out.append(call(t["name"], {**empty_arguments(schema), eps.finish.argument: value}))
        elif value is None:
            out += [call(t["name"], args) for args in enum_variants(schema)]
    return out


def _finish_values(eps: Episodes) -> list[Any]:
    if eps.finish is None:
        return []
    tool = next((t for t in eps.tools if t["name"] == eps.finish.tool), None)
    prop = ((tool or {}).get("inputSchema") or {}).get("properties", {}).get(eps.finish.argument)
    return list((prop or {}).get("enum") or [eps.finish.solved])


def _without_finish(eps: Episodes, actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [a for a in actions if a.get("tool_name") not in eps.finishing]


def constant(value: Any) -> Gamer:
    """Finish at once with the finishing argument at `value`."""

    def gamer(eps: Episodes, ep: Episode) -> Trajectory | None:
        assert eps.finish is not None
        tool = next(t for t in eps.tools if t["name"] == eps.finish.tool)
        args = {**empty_arguments(tool.get("inputSchema") or {}), eps.finish.argument: value}
        return eps.player.script(ep.spec, [call(tool["name"], args)])

    return gamer


def empty(eps: Episodes, ep: Episode) -> Trajectory | None:
    """Each finishing tool at once, empty arguments, every enum value (the best of them)."""
    got = [eps.player.script(ep.spec, [a]) for a in _finish_calls(eps)]
    return max(got, key=eps.fraction, default=None)


def null(eps: Episodes, ep: Episode) -> Trajectory | None:
    """The manifest's null policy, or no action."""
    m = eps.manifest
    if m.policies.null and not m.policies.null.startswith("builtin:"):
        return eps.player.agent(ep.spec, eps.ctx.load_policy("null"))
    return eps.player.script(ep.spec, [])


def try_then(value: Any) -> Gamer:
    """Play the request, then finish with `value` whatever happened."""

    def gamer(eps: Episodes, ep: Episode) -> Trajectory | None:
        twin = eps.twin_of(ep) if ep.trap else None
        request = _without_finish(eps, (twin or ep).actions)
        return eps.player.script(ep.spec, request + _finish_calls(eps, value))

    return gamer


def replay(eps: Episodes, ep: Episode) -> Trajectory | None:
    """Another task's oracle actions, same template (`None` when there is no other task)."""
    mine = json.dumps(ep.actions, sort_keys=True)
    others = [
        o
        for o in eps.items
        if o.template == ep.template
        and o.spec.reset != ep.spec.reset
        and json.dumps(o.actions, sort_keys=True) != mine
    ]
    if not others:
        return None
    other = eps.ctx.rng(f"panel/replay/{ep.spec.id}").choice(others)
    return eps.player.script(ep.spec, other.actions)


def _result_of(frame: dict[str, Any]) -> tuple[Any, Any]:
    obs = (frame.get("data") or {}).get("observation") or {}
    return obs.get("result"), obs.get("error")


class _RandomEpisode:
    def __init__(self, eps: Episodes, ep: Episode) -> None:
        self.eps = eps
        self.rng = eps.ctx.rng(f"panel/random/{json.dumps(ep.spec.reset, sort_keys=True)}")
        self.left = min(_RANDOM_CALLS, max(0, ep.spec.max_steps - 1))
        self.seen: list[str] = []
        self.tools = [t for t in eps.tools if t["name"] not in eps.finishing] or eps.tools

    def _args(self, schema: dict[str, Any]) -> dict[str, Any]:
        args = random_arguments(schema, self.rng)
        props = schema.get("properties") or {}
        for k, v in args.items():
            free = isinstance(v, str) and "enum" not in props.get(k, {}) and self.seen
            if free and self.rng.random() < 0.5:
                args[k] = self.rng.choice(self.seen)
        return args

    async def act(self, result: Any) -> dict[str, Any] | None:
        obs = result.observation
        self.seen += [s for s in strings(getattr(obs, "result", None)) if 0 < len(s) <= 80]
        if result.done:
            return None
        if self.left <= 0:
            if self.left < 0:
                return None
            self.left = -1
            finishing = [t for t in self.eps.tools if t["name"] in self.eps.finishing]
            t = self.rng.choice(finishing or self.eps.tools)
            return call(t["name"], self._args(t.get("inputSchema") or {}))
        self.left -= 1
        t = self.rng.choice(self.tools)
        return call(t["name"], self._args(t.get("inputSchema") or {}))


class _RandomAgent:
    name = "random"

    def __init__(self, eps: Episodes, ep: Episode) -> None:
        self.made = _RandomEpisode(eps, ep)

    def start(self, spec: Any, tools: Any) -> _RandomEpisode:
        return self.made


def random_calls(eps: Episodes, ep: Episode) -> Trajectory | None:
    """Schema-valid random calls (strings from earlier results half the time), then a random
    finish; the draws depend on the reset options, so phrasings of a task play alike."""
    key = f"random/{json.dumps(ep.spec.reset, sort_keys=True)}"
    if key not in eps.player.played:
        eps.player.played[key] = eps.player.agent(ep.spec, _RandomAgent(eps, ep))
    return eps.player.played[key]


Suggested = tuple[dict[str, list[dict[str, Any]]], dict[str, list[str]]]


def _suggestions(eps: Episodes, traj: Trajectory) -> Suggested:
    """What the errors of `traj` suggest, per tool: argument sets (an error's dict whose keys
    are the tool's arguments) and quoted values (not tool or argument names, not echoes of the
    call)."""
    props = {
        t["name"]: set((t.get("inputSchema") or {}).get("properties") or {}) for t in eps.tools
    }
    names = set(props).union(*props.values()) if props else set()
    examples: dict[str, list[dict[str, Any]]] = {}
    values: dict[str, list[str]] = {}

    def walk(tool: str, node: Any, sent: str) -> None:
        if isinstance(node, dict):
            schema_like = any(isinstance(v, dict) and "type" in v for v in node.values())
            if node and set(node) <= props.get(tool, set()) and not schema_like:
                examples.setdefault(tool, []).append(node)
            for k, v in node.items():
                if k not in _SCHEMA_KEYS:  # the tool's own schema, echoed, suggests nothing
                    walk(tool, v, sent)
        elif isinstance(node, list):
            for v in node:
                walk(tool, v, sent)
        elif isinstance(node, str):
            for m in _QUOTED.finditer(node):
                found = m.group(1) or m.group(2)
                mine = values.setdefault(tool, [])
                if found not in names and found not in mine and json.dumps(found) not in sent:
                    mine.append(found)

    for action, frame in zip(traj.actions, traj.frames, strict=False):
        _, error = _result_of(frame)
        if error:
            walk(action.get("tool_name", ""), error, json.dumps(action.get("arguments")))
    return examples, values


def _filled(schema: dict[str, Any], values: list[str]) -> dict[str, Any]:
    """The tool's empty arguments, the suggested values in its required text and text-list
    ones."""
    args = empty_arguments(schema)
    for k, p in (schema.get("properties") or {}).items():
        if k not in args:
            continue  # required arguments only: an optional one is not what the error asked
        options = [p, *p.get("anyOf", [])]
        if any(o.get("type") == "string" and "enum" not in o for o in options):
            args[k] = values[0]
        elif any((o.get("items") or {}).get("type") == "string" for o in options):
            args[k] = values[:5]
    return args


def _garbage(t: dict[str, Any], rng: Any) -> list[dict[str, Any]]:
    """Mistyped, missing, random and empty arguments (the likeliest valid call last)."""
    schema = t.get("inputSchema") or {}
    wrong = {k: {"wrong": [1]} for k in schema.get("properties") or {}}
    kinds = (wrong, {}, random_arguments(schema, rng), empty_arguments(schema))
    return [call(t["name"], a) for a in kinds]


def error_exploit(eps: Episodes, ep: Episode) -> Trajectory | None:
    """Garbage to the request's tools, then what the errors suggest (see the module doc)."""
    used = set(a.get("tool_name") for a in ep.actions)
    tools = [t for t in eps.tools if t["name"] in used or t["name"] in eps.finishing]
    rng = eps.ctx.rng(f"panel/errors/{ep.spec.id}")
    budget = max(1, ep.spec.max_steps - 1)
    probes = [[a for t in tools if t["name"] not in eps.finishing for a in _garbage(t, rng)]]
    probes += [_garbage(t, rng) for t in tools if t["name"] in eps.finishing]  # each may end it
    examples: dict[str, list[dict[str, Any]]] = {}
    values: dict[str, list[str]] = {}
    for probe in probes:
        found, quoted = _suggestions(eps, eps.player.script(ep.spec, probe[:budget]))
        for k, v in found.items():
            examples.setdefault(k, []).extend(v)
        for k, q in quoted.items():
            values.setdefault(k, []).extend(x for x in q if x not in values[k])
    follow = []
    for t in tools:
        name, schema = t["name"], t.get("inputSchema") or {}
        if name in eps.finishing:
            continue
        follow += [
            call(name, {**empty_arguments(schema), **ex}) for ex in examples.get(name, [])[:2]
        ]
        if values.get(name):
            follow.append(call(name, _filled(schema, values[name])))
    follow = follow[: budget - 1]
    everything = list(dict.fromkeys(v for q in values.values() for v in q))
    best: Trajectory | None = None
    for t in tools:
        if t["name"] not in eps.finishing:
            continue
        schema = t.get("inputSchema") or {}
        props = schema.get("properties") or {}
        free = [k for k, p in props.items() if p.get("type") == "string" and "enum" not in p]
        for value in everything[:3] or [None]:
            base = empty_arguments(schema)
            base.update({k: value for k in free if k in base and value is not None})
            for ex in examples.get(t["name"], [])[:2]:
                base.update(ex)
            variants = [{k: v} for k in base for v in props.get(k, {}).get("enum") or []]
            for args in variants or [{}]:
                got = eps.player.script(ep.spec, [*follow, call(t["name"], {**base, **args})])
                if best is None or eps.fraction(got) > eps.fraction(best):
                    best = got
    return best


def simple_gamers(eps: Episodes) -> dict[str, Gamer]:
    """The gamers of this module that apply to `eps`, by name."""
    out: dict[str, Gamer] = {"constant:null": null, "constant:empty": empty}
    for v in _finish_values(eps):
        out[f"constant:{v}"] = constant(v)
    for v in _finish_values(eps):
        out[f"try-then:{v}"] = try_then(v)
    out["random"] = random_calls
    out["replay"] = replay
    out["error-exploit"] = error_exploit
    return out
