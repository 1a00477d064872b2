"""Episodes several checks share: the probe, oracle runs, canary plants, tool listings.

The *probe* of a spec is the action sequence runtime checks repeat: the oracle's actions on it
when an oracle is declared (a real solving trajectory), else one empty call to every tool. It is
recorded once and replayed as a script, so "same seed and same actions" is literally true.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

from mcpgym.validate.base import Skip
from mcpgym.validate.context import Context
from mcpgym.validate.policies import Spec, Trajectory, call, empty_arguments, play, scripted
from mcpgym.validate.wire import Session

__all__ = [
    "ProbeUnavailable",
    "answering_tools",
    "canary_value",
    "oracle_runs",
    "planted_spec",
    "probe_actions",
    "run",
    "sim_tools",
]


# `play` words a transport failure (no reply, connection lost) "reset: ..." or "step: ...";
# an answer the environment gave is worded "reset answered ..." / "step answered ...".
_NO_REPLY = ("reset: ", "step: ")


class ProbeUnavailable(RuntimeError):
    """The probe could not be recorded because the server did not answer (the check errors)."""


def run(
    ctx: Context, spec: Spec, agent: Any, session: Session | None = None, mode: str = "simulation"
) -> Trajectory:
    """Play `agent` on `spec` in `session` (a fresh one when `None`, closed afterwards)."""
    own = session is None
    s = session or ctx.session(mode)
    try:
        return play(s, agent, spec, step_timeout=ctx.step_s, reset_timeout=ctx.reset_s)
    finally:
        if own:
            s.close()


def sim_tools(ctx: Context) -> list[dict[str, Any]]:
    """The simulation server's tools as MCP lists them (name, description, inputSchema, ...)."""
    if "sim_tools" not in ctx.cache:
        s = ctx.session()
        try:
            s.reset(seed=ctx.seed)
            reply = s.mcp("tools/list")
        finally:
            s.close()
        ctx.cache["sim_tools"] = ((reply.get("data") or {}).get("result") or {}).get("tools", [])
    return ctx.cache["sim_tools"]


def answering_tools(ctx: Context) -> list[dict[str, Any]]:
    """Tools marked `finishes` in the manifest (every tool when none is marked)."""
    tools = sim_tools(ctx)
    marked = {t.name for t in (ctx.manifest.tools or []) if t.finishes} if ctx.manifest else set()
    return [t for t in tools if t["name"] in marked] if marked else tools


def oracle_runs(ctx: Context) -> dict[str, Trajectory]:
    """The oracle played on every spec (cached); `Skip` without an oracle."""
    if "oracle_runs" not in ctx.cache:
        oracle = ctx.load_policy("oracle")
        ctx.cache["oracle_runs"] = {s.id: run(ctx, s, oracle) for s in ctx.specs()}
    return ctx.cache["oracle_runs"]


def probe_actions(ctx: Context, spec: Spec) -> list[dict[str, Any]]:
    """The probe of `spec` (see the module docstring)."""
    key = f"probe/{spec.id}"
    if key not in ctx.cache:
        actions: list[dict[str, Any]] | None = None
        if ctx.manifest is not None and ctx.manifest.policies.oracle:
            try:
                cached = ctx.cache.get("oracle_runs", {}).get(spec.id)  # level 3 played it already
                traj = cached or run(ctx, spec, ctx.load_policy("oracle"))
            except Skip:
                traj = None
            if traj is not None and traj.error is not None and traj.error.startswith(_NO_REPLY):
                # The server did not answer the oracle (a load spike, a dead server): switching
                # to another probe would make two reports of the same environment differ.
                raise ProbeUnavailable(
                    f"the oracle's episode on {spec.id!r} got no reply ({traj.error}); "
                    "re-run on a less loaded machine or raise timeouts.step_s"
                )
            actions = traj.actions if traj is not None and traj.error is None else None
        if actions is None:
            finishing = {t["name"] for t in answering_tools(ctx)}
            tools = sorted(sim_tools(ctx), key=lambda t: (t["name"] in finishing, t["name"]))
            actions = [call(t["name"], empty_arguments(t.get("inputSchema") or {})) for t in tools]
        ctx.cache[key] = actions
    return ctx.cache[key]


def replay(ctx: Context, spec: Spec, session: Session | None = None) -> Trajectory:
    """The probe of `spec` replayed as a script."""
    return run(ctx, spec, scripted(probe_actions(ctx, spec)), session)


def canary_value(ctx: Context, index: int) -> Any:
    """The value planted for canary `index`: random-looking, but fixed by the run's seed."""
    c = ctx.require_manifest().canaries[index]
    digest = hashlib.sha256(f"mcpgym-canary/{ctx.seed}/{index}".encode()).hexdigest()
    if c.kind == "string":
        return f"zq{digest[:10]}"
    assert c.min is not None and c.max is not None
    span = c.max - c.min - 1
    return c.min + 1 + int(digest[:12], 16) % span


def planted_spec(ctx: Context, index: int) -> tuple[Spec, str]:
    """The first spec with canary `index` planted (or a bare episode with only the canary's
    options, `on_task: false`), and the planted value as text."""
    m = ctx.require_manifest()
    if not m.canaries:
        raise Skip("no canary declared (canaries: [{option, kind}])")
    c = m.canaries[index]
    value = canary_value(ctx, index)
    base = ctx.specs()[0]
    if not c.on_task:
        base = Spec(f"canary{index}", {}, max_steps=base.max_steps)
    reset = {**dict(base.reset), **c.reset, c.option: c.planted(value)}
    return replace(base, id=f"{base.id}+canary{index}", reset=reset), str(value)
