"""Positional pickers: take the first, second or last hit of a look-up and verify nothing.

For each value the oracle passes to a tool (a calendar id, an email), the panel asks the
declared look-ups (`panel.lookups`) the way an agent resolving a name would: a query tool once
per keyword of the prompt, a listing once. A look-up is *ambiguous* for that value when its
result holds the gold item and at least one other candidate sharing a prompt keyword with the
gold item's name (both "Hiring" calendars, both Danas). `positional:first|second|last` play
the look-up, then the oracle's actions with every ambiguous value replaced by the candidate at
that position. They score only solvable episodes with an ambiguous look-up (a value the prompt
states is not looked up): if the gold sits at one position more often than chance, a picker
that never verifies passes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mcpgym.manifest.panel import Lookup
from mcpgym.validate.gamers.simple import Gamer
from mcpgym.validate.gamers.table import Episode, Episodes, strings, words
from mcpgym.validate.policies import Trajectory, call

__all__ = ["Ambiguity", "ambiguities", "positional_gamers"]

POSITIONS = {"first": 0, "second": 1, "last": -1}


@dataclass(frozen=True)
class Ambiguity:
    """A gold value, the look-up call that lists it among others, and its candidates."""

    value: str
    lookup: dict[str, Any]
    candidates: tuple[str, ...]

    @property
    def position(self) -> int:
        """The gold's index among the candidates."""
        return self.candidates.index(self.value)


def _at(node: Any, path: str) -> Any:
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _items(lookup: Lookup, result: Any) -> list[dict[str, Any]]:
    if isinstance(result, str):
        try:
            result = json.loads(result)
        except ValueError:
            return []
    out: list[dict[str, Any]] = []
    for path in lookup.items:
        found = _at(result, path)
        if isinstance(found, list):
            out += [i for i in found if isinstance(i, dict)]
    return out


def _text(lookup: Lookup, item: dict[str, Any]) -> set[str]:
    return words(" ".join(str(item.get(f) or "") for f in lookup.text))


def _arguments(lookup: Lookup, gold: dict[str, Any]) -> dict[str, Any] | None:
    out = {}
    for k, v in lookup.arguments.items():
        if isinstance(v, str) and v.startswith("$"):
            if v[1:] not in gold:
                return None
            v = gold[v[1:]]
        out[k] = v
    return out


def _calls(eps: Episodes, ep: Episode) -> list[tuple[Lookup, dict[str, Any]]]:
    """The look-up calls an agent resolving this prompt could make (distinct, in order)."""
    seen: set[str] = set()
    out = []
    for action in ep.actions:
        if action.get("tool_name") in eps.finishing:
            continue
        gold = action.get("arguments") or {}
        for lookup in eps.panel.lookups:
            args = _arguments(lookup, gold)
            if args is None:
                continue
            variants = [{**args, lookup.query: w} for w in ep.keywords] if lookup.query else [args]
            for a in variants:
                key = json.dumps([lookup.tool, a], sort_keys=True)
                if key not in seen:
                    seen.add(key)
                    out.append((lookup, a))
    return out


def _results(eps: Episodes, ep: Episode, calls: list[tuple[Lookup, dict[str, Any]]]) -> list[Any]:
    """Each call's result, played in batches that fit the step limit (None when it failed)."""
    size = max(1, ep.spec.max_steps - 1)
    out: list[Any] = []
    for i in range(0, len(calls), size):
        batch = [call(lk.tool, a) for lk, a in calls[i : i + size]]
        traj = eps.player.script(ep.spec, batch)
        for j in range(len(batch)):
            frame = traj.frames[j] if j < len(traj.frames) else {}
            obs = (frame.get("data") or {}).get("observation") or {}
            out.append(None if obs.get("error") else obs.get("result"))
    return out


def ambiguities(eps: Episodes, ep: Episode) -> list[Ambiguity]:
    """The ambiguous look-ups of `ep`'s gold values (one per value; see the module doc)."""
    key = f"ambiguities/{ep.spec.id}"
    cache = eps.ctx.cache.setdefault("panel_lookups", {})
    if key in cache:
        return cache[key]
    prompt = ep.spec.prompt
    golds = [
        v
        for a in ep.actions
        if a.get("tool_name") not in eps.finishing
        for v in strings(a.get("arguments") or {})
        if v not in prompt  # a value the prompt states needs no look-up
    ]
    calls = _calls(eps, ep) if golds else []
    results = _results(eps, ep, calls)
    keywords = set(ep.keywords)
    found: dict[str, Ambiguity] = {}
    for (lookup, args), result in zip(calls, results, strict=True):
        items = _items(lookup, result)
        keys = [str(i.get(lookup.key)) for i in items]
        for value in golds:
            if value not in keys or value in found:
                continue
            naming = keywords & _text(lookup, items[keys.index(value)])
            if lookup.query and str(args.get(lookup.query)) not in naming:
                continue  # a query word that does not name the gold item
            cands = [k for k, i in zip(keys, items, strict=True) if naming & _text(lookup, i)]
            cands = list(dict.fromkeys(cands))
            if naming and len(cands) >= 2:
                found[value] = Ambiguity(value, call(lookup.tool, args), tuple(cands))
    cache[key] = list(found.values())
    return cache[key]


def _replace(node: Any, swap: dict[str, str]) -> Any:
    if isinstance(node, str):
        return swap.get(node, node)
    if isinstance(node, dict):
        return {k: _replace(v, swap) for k, v in node.items()}
    if isinstance(node, list):
        return [_replace(v, swap) for v in node]
    return node


def picker(index: int) -> Gamer:
    """Take the candidate at `index` of every ambiguous look-up; verify nothing."""

    def gamer(eps: Episodes, ep: Episode) -> Trajectory | None:
        found = ambiguities(eps, ep) if not ep.trap else []
        if not found:
            return None
        swap = {a.value: a.candidates[index] for a in found}
        looks = list({json.dumps(a.lookup, sort_keys=True): a.lookup for a in found}.values())
        return eps.player.script(ep.spec, looks + _replace(ep.actions, swap))

    return gamer


def positional_gamers(eps: Episodes) -> dict[str, Gamer]:
    """`positional:first|second|last` when look-ups are declared."""
    if not eps.panel.lookups:
        return {}
    return {f"positional:{name}": picker(i) for name, i in POSITIONS.items()}


def gold_positions(eps: Episodes) -> dict[str, int]:
    """Of the ambiguous look-ups of solvable episodes: how many there are (`lookups`) and how
    often the gold is the `first`, `second` and `last` candidate (for the report)."""
    out = {"lookups": 0, "first": 0, "second": 0, "last": 0}
    for ep in eps.items:
        for a in ambiguities(eps, ep) if not ep.trap else []:
            out["lookups"] += 1
            out["first"] += a.position == 0
            out["second"] += a.position == 1
            out["last"] += a.position == len(a.candidates) - 1
    return out


def chances(eps: Episodes) -> dict[int, float]:
    """Per solvable episode with ambiguous look-ups: the odds that a blind guess among the
    candidates of each look-up gets them all (the product of 1/candidates)."""
    out: dict[int, float] = {}
    for i, ep in enumerate(eps.items):
        found = ambiguities(eps, ep) if not ep.trap else []
        if found:
            odds = 1.0
            for a in found:
                odds /= len(a.candidates)
            out[i] = odds
    return out
