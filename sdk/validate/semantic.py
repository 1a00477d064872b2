"""Level 3, semantic (no model needed): is the reward a measurement of solving the task?

The oracle reaches the maximum; null, empty and degenerate answers stay clear of it (the floor
gap); a planted canary answer never leaks; the verifier is deterministic; a recorded trajectory
replays to the same rewards; a random policy stays below the maximum (a warning).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from typing import Any

import httpx

from mcpgym.validate.base import Fail, Skip, check, count
from mcpgym.validate.context import Context
from mcpgym.validate.policies import call, enum_variants, random_arguments, scripted
from mcpgym.validate.probe import answering_tools, oracle_runs, planted_spec, run, sim_tools

__all__: list[str] = []

_NEEDS = ("check_reward_range", "check_determinism")


def _reward(ctx: Context) -> Any:
    m = ctx.require_manifest()
    if m.reward is None:
        raise Skip("no reward range declared (see check_reward_range)")
    return m.reward


@check("semantic", needs=(*_NEEDS, "check_policies"))
def check_oracle_reaches_max(ctx: Context) -> str | None:
    """The oracle policy scores reward.max on every task."""
    reward = _reward(ctx)
    runs = oracle_runs(ctx)
    low = []
    for spec_id, traj in runs.items():
        score = traj.score(reward.score)
        if traj.error or not math.isclose(score, reward.max, abs_tol=1e-9):
            low.append(f"{spec_id}: {traj.error or score}")
    if low:
        raise Fail(
            f"the oracle misses the maximum {reward.max} on {len(low)}/{len(runs)}: "
            + "; ".join(low[:5]),
            "a correct solution must earn the full reward: fix the grader (or the oracle)",
            episodes=low,
        )
    return f"{len(runs)} episodes at {reward.max:g}"


def _degenerate(ctx: Context) -> list[tuple[str, list[dict[str, Any]]]]:
    """Named action scripts that must not earn the maximum."""
    out: list[tuple[str, list[dict[str, Any]]]] = [("no action", [])]
    for t in answering_tools(ctx):
        for args in enum_variants(t.get("inputSchema") or {}):
            out.append(
                (
                    f"{t['name']}({json.dumps(args, sort_keys=True)}) at once",
                    [call(t["name"], args)],
                )
            )
    return out


@check("semantic", needs=_NEEDS)
def check_floor_gap(ctx: Context) -> str | None:
    """Null, empty and degenerate answers (finish at once with every status, random calls) score
    at most reward.max - margin."""
    reward = _reward(ctx)
    ceiling = reward.max - reward.gap
    policies: list[tuple[str, Any]] = [
        (name, scripted(actions)) for name, actions in _degenerate(ctx)
    ]
    if ctx.manifest is not None and ctx.manifest.policies.null:
        policies.insert(0, ("null policy", ctx.load_policy("null")))
    paid = []
    for spec in ctx.specs():
        for name, agent in policies:
            score = run(ctx, spec, agent).score(reward.score)
            if score > ceiling:
                paid.append(f"{name} on {spec.id}: {score:g}")
        rng = ctx.rng(f"floor/{spec.id}")
        for t in answering_tools(ctx):
            scores = []
            for _ in range(3):  # a random call counts only if it is paid every time
                act = call(t["name"], random_arguments(t.get("inputSchema") or {}, rng))
                scores.append(run(ctx, spec, scripted([act])).score(reward.score))
            if min(scores) > ceiling:
                paid.append(f"random {t['name']} call on {spec.id}: {min(scores):g}")
    if paid:
        raise Fail(
            f"{len(paid)} degenerate episode(s) score above {ceiling:g}: " + "; ".join(paid[:6]),
            "pay only for evidence of solving: check the answer, require the work (a refused "
            "call, a lookup) before crediting an outcome",
            episodes=paid,
        )
    return f"all {len(ctx.specs())} episodes x {len(policies)} policies below {ceiling:g}"


def _texts_of(frame: dict[str, Any]) -> str:
    return json.dumps(frame, default=str)


@check("semantic", needs=("check_episode",))
def check_no_leakage(ctx: Context) -> str | None:
    """A planted canary answer appears in no observation, tool description or error text."""
    m = ctx.require_manifest()
    if not m.canaries:
        raise Skip("no canary declared (canaries: [{option, kind}])")
    for i, c in enumerate(m.canaries):
        spec, value = planted_spec(ctx, i)
        s = ctx.session()
        try:
            places = {"the reset observation": _texts_of(s.reset(**dict(spec.reset)))}
            places["tool descriptions"] = _texts_of(s.mcp("tools/list"))
            places["list_tools"] = _texts_of(s.step({"type": "list_tools"}))
            places["/metadata"] = httpx.get(ctx.server_url() + "/metadata", timeout=10).text
            errors = [s.call("__no_such_tool__", {})]
            rng = ctx.rng(f"leak/{i}")
            for t in sim_tools(ctx):
                schema = t.get("inputSchema") or {}
                props = schema.get("properties") or {}
                errors.append(s.call(t["name"], {k: {"wrong": [1]} for k in props} or {"_": 1}))
                errors.append(s.call(t["name"], {"__bogus__": 1}))
        finally:
            s.close()
        for t in sim_tools(ctx):  # valid but wrong answers: their error hints
            schema = t.get("inputSchema") or {}
            acts = [
                call(t["name"], a) for a in (random_arguments(schema, rng), *enum_variants(schema))
            ]
            errors += run(ctx, spec, scripted(acts)).frames
        if c.calls:  # the manifest's aimed calls: their errors must not hold it either
            errors += run(ctx, spec, scripted([call(x.tool, x.arguments) for x in c.calls])).frames
        places["error texts"] = " ".join(
            _texts_of(e)
            for e in errors
            if ((e.get("data") or {}).get("observation") or {}).get("error") is not None
            or e.get("type") == "error"
        )
        leaks = [where for where, text in places.items() if value in text]
        if leaks:
            raise Fail(
                f"the planted answer of canary {m.canaries[i].option!r} appears in "
                + ", ".join(leaks),
                "never put the answer in observations, descriptions or error hints",
                where=leaks,
            )
    return count(len(m.canaries), "canary", "canaries")


@check("semantic", needs=(*_NEEDS, "check_policies"))
def check_verifier_determinism(ctx: Context) -> str | None:
    """The same trajectory gets the same rewards every time it is graded."""
    reward = _reward(ctx)
    runs = oracle_runs(ctx)
    chosen = ctx.sample("verifier", 5)
    for spec in chosen:
        spec_id, traj = spec.id, runs[spec.id]
        a = run(ctx, spec, scripted(traj.actions))
        b = run(ctx, spec, scripted(traj.actions))
        if a.rewards != b.rewards:
            at = next(
                i for i, (x, y) in enumerate(zip(a.rewards, b.rewards, strict=False)) if x != y
            )
            raise Fail(
                f"{spec_id}: two gradings of one trajectory differ at step {at + 1}",
                "grade from the episode's state only: no clock, no unseeded randomness",
            )
    return f"{ctx.sampled(len(chosen))} graded twice, score={reward.score}"


@check("semantic", needs=("check_verifier_determinism",))
def check_replay(ctx: Context) -> str | None:
    """A recorded oracle trajectory replayed in a fresh session earns the recorded rewards."""
    runs = oracle_runs(ctx)
    chosen = ctx.sample("replay", 5)
    for spec in chosen:
        traj = runs[spec.id]
        again = run(ctx, replace(spec, id=spec.id + "/replay"), scripted(traj.actions))
        if again.rewards != traj.rewards:
            raise Fail(
                f"{spec.id}: the replay's rewards differ from the recorded ones",
                "rewards must depend only on the seed and the actions",
            )
    return f"{ctx.sampled(len(chosen))} replayed"


@check("semantic", needs=(*_NEEDS, "check_verifier_determinism"), severity="warn")
def check_random_floor(ctx: Context) -> str | None:
    """A random policy (random tools, schema-valid arguments) scores well below the maximum."""
    reward = _reward(ctx)
    tools = sim_tools(ctx)
    if not tools:
        raise Skip("no tools")
    scores = []
    for spec in ctx.sample("random", 5):
        rng = ctx.rng(f"random/{spec.id}")
        steps = min(spec.max_steps, 10)
        acts = []
        for _ in range(steps):
            t = rng.choice(tools)
            acts.append(call(t["name"], random_arguments(t.get("inputSchema") or {}, rng)))
        scores.append(run(ctx, spec, scripted(acts)).score(reward.score))
    mean = sum(scores) / len(scores)
    if mean > reward.max - reward.gap:
        raise Fail(f"random play averages {mean:g}", "make the task need more than luck")
    return f"mean {mean:g} over {ctx.sampled(len(scores))}"
