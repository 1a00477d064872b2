"""The panel's episodes: each spec with its oracle run and what the gamers read from it.

`Episodes` plays the oracle on every panel spec (distinct reset options and prompts), and knows
for each one whether it is a *trap* (the oracle finishes with another outcome than `solved`),
its *pair* (a trap and its solvable twin, matched per prompt variant), its *template* (a
declared tag, else the oracle's sequence of tools) and the prompt's keywords. `Player` plays
scripts on one reused session and remembers every (reset options, actions) it played: gamers
that do not read the prompt cost one episode per task, not one per phrasing.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mcpgym.manifest.panel import FinishDecl, Panel
from mcpgym.types import ToolInfo
from mcpgym.validate.base import Skip
from mcpgym.validate.context import Context
from mcpgym.validate.policies import Spec, Trajectory, play, scripted
from mcpgym.validate.probe import answering_tools, sim_tools
from mcpgym.validate.wire import Session

__all__ = ["Episode", "Episodes", "Player", "episodes_of", "strings", "words"]

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]+")
_NO_REPLY = ("reset: ", "step: ")


def words(text: str) -> set[str]:
    """The lower-cased words (2+ letters) of `text`."""
    return {w.lower() for w in _WORD.findall(text)}


def strings(node: Any) -> Iterator[str]:
    """Every string in a JSON-like value (dict values, list items), in order."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for v in node.values():
            yield from strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from strings(v)


def _key(*parts: Any) -> str:
    return json.dumps(parts, sort_keys=True, default=repr)


@dataclass
class Episode:
    """One panel spec and what the gamers read from its oracle run."""

    spec: Spec
    oracle: Trajectory
    trap: bool
    template: str
    keywords: list[str]
    pair: str | None = None
    variant: str = ""

    @property
    def actions(self) -> list[dict[str, Any]]:
        """The oracle's actions."""
        return self.oracle.actions


class Player:
    """Plays scripts on one reused `/ws` session, each (reset, actions) once."""

    def __init__(self, ctx: Context, url: str | None = None) -> None:
        self.ctx = ctx
        self.url = url
        self.played: dict[str, Trajectory] = {}
        self._session: Session | None = None
        self.tools = [
            ToolInfo(
                name=t["name"],
                description=t.get("description") or "",
                input_schema=t.get("inputSchema") or {"type": "object"},
            )
            for t in sim_tools(ctx)
        ]

    def session(self) -> Session:
        """The reused session (a new one after a transport failure)."""
        if self._session is None:
            wait = max(self.ctx.step_s, self.ctx.reset_s) + 5.0
            self._session = (
                Session(self.url, timeout=wait) if self.url else self.ctx.session(timeout=wait)
            )
        return self._session

    def script(self, spec: Spec, actions: list[dict[str, Any]]) -> Trajectory:
        """`actions` played on `spec` (remembered)."""
        key = _key(spec.reset, actions)
        if key not in self.played:
            self.played[key] = self.agent(spec, scripted(actions))
        return self.played[key]

    def agent(self, spec: Spec, agent: Any) -> Trajectory:
        """`agent` played on `spec` (not remembered: it may read the prompt or the results)."""
        traj = play(
            self.session(),
            agent,
            spec,
            step_timeout=self.ctx.step_s,
            reset_timeout=self.ctx.reset_s,
            tools=self.tools,
        )
        if traj.error is not None and traj.error.startswith(_NO_REPLY):
            self.close()
        return traj

    def close(self) -> None:
        """Close the session."""
        if self._session is not None:
            self._session.close()
            self._session = None


def finish_decl(ctx: Context, oracle: list[Trajectory]) -> FinishDecl | None:
    """The manifest's `panel.finish`, else the first finishing tool with a required enum
    argument, `solved` being the value the oracle gives it most often."""
    panel = ctx.require_manifest().panel
    if panel.finish is not None:
        return panel.finish
    for t in answering_tools(ctx):
        schema = t.get("inputSchema") or {}
        for arg in schema.get("required") or []:
            if "enum" in (schema.get("properties") or {}).get(arg, {}):
                used = Counter(
                    json.dumps(finish_value(tr, t["name"], arg)) for tr in oracle
                ).most_common()
                used = [(v, n) for v, n in used if v != "null"]
                if used:
                    return FinishDecl(tool=t["name"], argument=arg, solved=json.loads(used[0][0]))
    return None


def finish_value(traj: Trajectory, tool: str, argument: str) -> Any:
    """The `argument` of the last `tool` call of `traj`, or None."""
    for a in reversed(traj.actions):
        if a.get("tool_name") == tool:
            return (a.get("arguments") or {}).get(argument)
    return None


def _tag(spec: Spec, key: str) -> Any:
    return spec.tags.get(key, spec.data.get(key))


def _variants(specs: list[Spec]) -> list[str]:
    """Tag keys that differ among specs sharing their reset options (a prompt-only axis)."""
    by_reset: dict[str, list[Spec]] = {}
    for s in specs:
        by_reset.setdefault(_key(s.reset), []).append(s)
    axes: set[str] = set()
    for group in by_reset.values():
        for k in {k for s in group for k in s.tags}:
            if len({str(s.tags.get(k)) for s in group}) > 1:
                axes.add(k)
    return sorted(axes)


class Episodes:
    """Every panel episode (see the module docstring); built once per validation run."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.manifest = ctx.require_manifest()
        self.panel: Panel = self.manifest.panel.with_overrides(ctx.gates)
        if self.manifest.reward is None:
            raise Skip("no reward range declared (see check_reward_range)")
        self.reward = self.manifest.reward
        self.player = Player(ctx)
        self.tools = sim_tools(ctx)
        self.finishing = {t["name"] for t in answering_tools(ctx)}
        oracle = ctx.load_policy("oracle")
        specs = ctx.panel_specs()
        known = ctx.cache.get("oracle_runs", {})
        runs = [known.get(s.id) or self.player.agent(s, oracle) for s in specs]
        self.finish = finish_decl(ctx, runs)
        common = Counter(w for s in specs for w in words(s.prompt))
        axes = _variants(specs)
        self.items: list[Episode] = []
        for spec, traj in zip(specs, runs, strict=True):
            trap = False
            if self.finish is not None:
                got = finish_value(traj, self.finish.tool, self.finish.argument)
                trap = got is not None and got != self.finish.solved
            declared = _tag(spec, self.panel.template) if self.panel.template else None
            template = str(declared) if declared is not None else _signature(traj)
            own = words(spec.prompt + " " + _reset_prompt(traj))
            keywords = sorted(w for w in own if len(w) >= 3 and common[w] <= len(specs) / 2)
            pair = _tag(spec, self.panel.pair)
            variant = _key([str(spec.tags.get(k)) for k in axes])
            self.items.append(
                Episode(spec, traj, trap, template, keywords, str(pair) if pair else None, variant)
            )

    def score(self, traj: Trajectory) -> float:
        """The episode's score (nan for a failed episode)."""
        return traj.score(self.reward.score) if traj.error is None else math.nan

    def passed(self, traj: Trajectory) -> bool:
        """Whether `traj` is paid as a success: above `reward.max - margin`."""
        s = self.score(traj)
        return not math.isnan(s) and s > self.reward.max - self.reward.gap

    def full(self, traj: Trajectory) -> bool:
        """Whether `traj` kept full marks (`reward.max`)."""
        return math.isclose(self.score(traj), self.reward.max, abs_tol=1e-9)

    def fraction(self, traj: Trajectory) -> float:
        """The score as a fraction of the reward range (0 for a failed episode)."""
        s = self.score(traj)
        if math.isnan(s):
            return 0.0
        r = self.reward
        return min(1.0, max(0.0, (s - r.min) / (r.max - r.min)))

    def solvable(self) -> list[Episode]:
        """Episodes whose oracle reached full marks."""
        return [e for e in self.items if self.full(e.oracle)]

    def twin_of(self, ep: Episode) -> Episode | None:
        """The other half of `ep`'s pair (the same prompt variant), if any."""
        if ep.pair is None:
            return None
        for other in self.items:
            same = other.pair == ep.pair and other.variant == ep.variant
            if other is not ep and same and other.trap != ep.trap:
                return other
        return None

    def close(self) -> None:
        """Close the player's session."""
        self.player.close()


def _signature(traj: Trajectory) -> str:
    return ">".join(str(a.get("tool_name") or a.get("type")) for a in traj.actions)


def _reset_prompt(traj: Trajectory) -> str:
    obs = (traj.reset_frame.get("data") or {}).get("observation") or {}
    meta = obs.get("metadata") or {}
    value = meta.get("prompt") if isinstance(meta, dict) else None
    return value if isinstance(value, str) else ""


def episodes_of(ctx: Context) -> Episodes:
    """The run's `Episodes` (built on first use, closed with the run)."""
    if "panel" not in ctx.cache:
        ctx.cache["panel"] = Episodes(ctx)
        ctx.on_close(ctx.cache["panel"].close)
    return ctx.cache["panel"]
