"""Determinism across processes: the same episodes played on a second server process.

Two sessions of one server share its interpreter (`check_determinism` compares those); a second
`mcpgym serve` process has its own string hashing (`PYTHONHASHSEED`), import order and
module-level state, which is where a set's iteration order or a cache keyed by `id()` leaks
into observations. The oracle's actions and the random gamer's, on a sample of episodes, must
give the same observations and rewards on both (a difference counts when this server repeats
its own episode: one that varies within a process is `check_determinism`'s finding).
"""

from __future__ import annotations

from typing import Any

from mcpgym.validate.base import Skip
from mcpgym.validate.gamers.table import Episodes, Player
from mcpgym.validate.policies import Trajectory, scripted
from mcpgym.validate.serve import LocalServer, ServerStartError

__all__ = ["compare_processes"]

_SAMPLE = 4


def _scripts(eps: Episodes) -> list[tuple[Any, list[dict[str, Any]]]]:
    chosen = eps.ctx.sample("processes", _SAMPLE, [e.spec for e in eps.items])
    by_id = {e.spec.id: e for e in eps.items}
    out = []
    for spec in chosen:
        out.append((spec, by_id[spec.id].actions))
        random = [
            t
            for k, t in eps.player.played.items()
            if k.startswith("random/") and t.spec_id == spec.id
        ]
        if random:
            out.append((spec, random[0].actions))
    return out


def compare_processes(eps: Episodes) -> tuple[int, list[str]]:
    """(episodes compared, differences named) between this server and a second process."""
    ctx = eps.ctx
    if ctx.url is not None:
        raise Skip("--url names one server: there is no second process to compare")
    if not ctx.entry_point:
        raise Skip("no entry point to serve")
    scripts = _scripts(eps)
    second = LocalServer(
        ctx.entry_point,
        root=ctx.root,
        startup_s=ctx.startup_s,
        env={"PYTHONHASHSEED": str(1 + ctx.seed % 4000)},
    )
    try:
        second.start()
    except ServerStartError as exc:
        raise Skip(f"a second server did not start: {exc}") from None
    there = Player(ctx, url=second.url)
    differ: list[str] = []
    try:
        for spec, actions in scripts:
            a = eps.player.script(spec, actions)
            b = there.script(spec, actions)
            found = _difference(a, b)
            # a difference counts when this server repeats itself: an episode that differs
            # within one process too (a time limit under load) is check_determinism's business
            if found and not _difference(a, eps.player.agent(spec, scripted(actions))):
                differ.append(f"{spec.id}: {found}")
    finally:
        there.close()
        second.stop()
    return len(scripts), differ


def _difference(a: Trajectory, b: Trajectory) -> str:
    """How `b` differs from `a` (rewards first, then the first observation), or ""."""
    if a.rewards != b.rewards:
        return f"rewards {a.rewards} vs {b.rewards}"
    pairs = zip(a.observations(), b.observations(), strict=False)
    at = next((i for i, (x, y) in enumerate(pairs) if x != y), None)
    if at is None and len(a.observations()) == len(b.observations()):
        return ""
    return f"observation {at if at is not None else min(len(a.frames), len(b.frames)) + 1} differs"
