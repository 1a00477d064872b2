"""The collateral-mutation pass: the oracle's plan plus one unrequested change must lose marks.

For each solvable episode (distinct oracle actions), each write call of the plan (`panel.writes`)
is mutated, and a mutant is the plan with that one change (at most four per episode, chosen by
the run's seed):

- `change FIELD`: a free-text argument the oracle gave gets a marker value instead (an
  email-shaped one for email fields, a rare zone for time-zone fields);
- `set FIELD`: an optional free-text or zone argument the oracle left out gets one — only on a
  call that changes an existing row (its result's `id` is one of its arguments): the row the
  task checks must change in the asked fields only, while a new row may carry more;
- `add to FIELD`: a list-of-objects argument (the guests) gets one more item, text marked;
- `again`: the call is repeated right after itself with the free-text arguments the oracle
  gave marked (as it was, when it has none) — a second row, or a second change of the row the
  task checks.

A mutant counts only when it took effect: its marker appears in a tool result after the
change, or an unmarked repeat succeeded with a result of its own (a rejected or ignored change
proves nothing). An effective mutant that keeps full
marks (`reward.max`) means the grader does not see collateral damage.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from mcpgym.validate.gamers.table import Episode, Episodes, strings
from mcpgym.validate.policies import Trajectory

__all__ = ["Mutant", "mutants", "play_mutants"]

_PER_EPISODE = 4
_ZONE = "Pacific/Chatham"


@dataclass(frozen=True)
class Mutant:
    """One changed plan: what was changed, the actions, and the marker that shows it held."""

    episode: int
    change: str
    actions: tuple[dict[str, Any], ...]
    marker: str
    repeats: int | None = None
    """For `again`: the index of the repeated call (its copy follows it)."""


def _kind(prop: dict[str, Any]) -> str | None:
    """`text`, `email`, `zone` or `objects` for a mutable argument, else None."""
    options = [prop, *prop.get("anyOf", []), *prop.get("oneOf", [])]
    for p in options:
        fmt = p.get("x-format") or p.get("format") or prop.get("x-format") or prop.get("format")
        plain = p.get("type") == "string" and "enum" not in p and "const" not in p
        if plain and fmt in (None, "email", "time-zone"):
            return {"email": "email", "time-zone": "zone"}.get(fmt or "", "text")
        if p.get("type") == "array" and ((p.get("items") or {}).get("type") == "object"):
            return "objects"
        if p.get("type") == "array" and "$ref" in (p.get("items") or {}):
            return "objects"
    return None


def _value(kind: str, marker: str) -> str:
    return {"email": f"{marker}@example.test", "zone": _ZONE}.get(kind, marker)


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return (schema.get("$defs") or {}).get(ref.rsplit("/", 1)[1], {})
    return node


def _item(schema: dict[str, Any], prop: dict[str, Any], marker: str) -> dict[str, Any] | None:
    arrays = [p for p in [prop, *prop.get("anyOf", [])] if p.get("type") == "array"]
    if not arrays:
        return None
    item = _resolve(schema, arrays[0].get("items") or {})
    out = {}
    for k in item.get("required") or []:
        kind = _kind(_resolve(schema, (item.get("properties") or {}).get(k, {})))
        if kind not in ("text", "email", "zone"):
            return None
        out[k] = _value(kind, marker)
    return out or None


def mutants(eps: Episodes) -> list[Mutant]:
    """Every mutant the pass plays (sampled per episode by the run's seed)."""
    writes = set(eps.panel.writes)
    schemas = {t["name"]: t.get("inputSchema") or {} for t in eps.tools}
    seen: set[str] = set()
    out: list[Mutant] = []
    for index, ep in enumerate(eps.items):
        key = json.dumps([ep.spec.reset, ep.actions], sort_keys=True)
        if key in seen or ep not in eps.solvable():
            continue
        seen.add(key)
        found = _of_episode(index, ep, writes, schemas)
        rng = eps.ctx.rng(f"panel/collateral/{ep.spec.id}")
        out += sorted(rng.sample(found, min(_PER_EPISODE, len(found))), key=found.index)
    return out


def _created(ep: Episode, at: int) -> bool:
    """Whether write `at` made a new row: its result's `id` is none of the call's arguments
    (an update names the row it changes)."""
    frame = ep.oracle.frames[at] if at < len(ep.oracle.frames) else {}
    result = ((frame.get("data") or {}).get("observation") or {}).get("result")
    made = result.get("id") if isinstance(result, dict) else None
    args = ep.actions[at].get("arguments") or {}
    return isinstance(made, str) and made not in set(strings(args))


def _of_episode(
    index: int, ep: Episode, writes: set[str], schemas: dict[str, dict[str, Any]]
) -> list[Mutant]:
    """The mutants of one episode (see the module docstring)."""
    found: list[Mutant] = []
    for i, action in enumerate(ep.actions):
        tool = action.get("tool_name", "")
        if tool not in writes:
            continue
        schema = schemas.get(tool, {})
        args = action.get("arguments") or {}
        created = _created(ep, i)
        texts: dict[str, str] = {}
        for name, prop in (schema.get("properties") or {}).items():
            kind = _kind(prop)
            marker = f"zqcollateral{index}x{i}x{len(found)}"
            given = args.get(name) is not None
            if kind is None or (not given and (created or kind == "email")):
                continue  # a new row may carry more than was asked; an unset email is no guest
            if kind == "objects":
                extra = _item(schema, prop, marker) if isinstance(args.get(name), list) else None
                if extra is not None:
                    changed = {**args, name: [*args[name], extra]}
                    found.append(_mutant(index, ep, i, changed, f"{tool}: add to {name}", marker))
                continue
            if kind == "text" and given:
                texts[name] = kind
            value = _value(kind, marker)
            if given and value == args[name]:
                continue
            verb = "change" if given else "set"
            changed = {**args, name: value}
            found.append(_mutant(index, ep, i, changed, f"{tool}: {verb} {name}", value))
        marker = f"zqcollateral{index}x{i}again" if texts else ""
        again = {**args, **{n: _value(k, marker) for n, k in texts.items()}}
        acts = copy.deepcopy(ep.actions)
        acts.insert(i + 1, {**action, "arguments": again})
        found.append(Mutant(index, f"{tool}: again", tuple(acts), marker, repeats=i))
    return found


def _mutant(
    index: int, ep: Episode, at: int, args: dict[str, Any], change: str, marker: str
) -> Mutant:
    acts = copy.deepcopy(ep.actions)
    acts[at] = {**acts[at], "arguments": args}
    return Mutant(index, change, tuple(acts), marker)


def _result(traj: Trajectory, at: int) -> tuple[Any, Any]:
    frame = traj.frames[at] if at < len(traj.frames) else {}
    obs = (frame.get("data") or {}).get("observation") or {}
    return obs.get("result"), obs.get("error")


def took_effect(traj: Trajectory, mutant: Mutant) -> bool:
    """Whether the change was stored: the marker shows in a tool result, or (an unmarked
    repeat) the copy succeeded with another result than the original (a second row)."""
    if not mutant.marker and mutant.repeats is not None:
        first, _ = _result(traj, mutant.repeats)
        again, error = _result(traj, mutant.repeats + 1)
        return error is None and mutant.repeats + 1 < len(traj.frames) and again != first
    for frame in traj.frames:
        obs = (frame.get("data") or {}).get("observation") or {}
        if obs.get("error") is None and mutant.marker in json.dumps(obs.get("result"), default=str):
            return True
    return False


def play_mutants(eps: Episodes) -> tuple[int, int, list[str]]:
    """(mutants played, effective ones, those that kept full marks, named)."""
    played = effective = 0
    kept: list[str] = []
    for m in mutants(eps):
        ep = eps.items[m.episode]
        traj = eps.player.script(ep.spec, list(m.actions))
        played += 1
        if not took_effect(traj, m):
            continue
        effective += 1
        if eps.full(traj):
            kept.append(f"{ep.spec.id}: {m.change}")
    return played, effective, kept
