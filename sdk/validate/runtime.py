"""Level 2, runtime: the environment served for real on 127.0.0.1, driven over `/ws` and `/mcp`.

Start-up and `/health`, `/schema`, an episode's API contract, rewards, observations, state,
tool visibility per mode, bad input, step timeouts, determinism, isolation, seed control and
oracle containment.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import replace
from typing import Any

import httpx

from mcpgym.types import CallToolObservation, ListToolsObservation
from mcpgym.validate.base import Fail, NotApplicable, Skip, check, count
from mcpgym.validate.context import Context
from mcpgym.validate.mcp_http import McpHttp
from mcpgym.validate.policies import (
    call,
    empty_arguments,
    hostile_frames,
    random_arguments,
    scripted,
)
from mcpgym.validate.probe import planted_spec, replay, run, sim_tools
from mcpgym.validate.serve import ServerStartError
from mcpgym.validate.wire import WireError

__all__: list[str] = []

WS_CODES = {"INVALID_JSON", "UNKNOWN_TYPE", "VALIDATION_ERROR", "EXECUTION_ERROR", "SESSION_ERROR"}
TOOL_ERRORS = {"tool_not_found", "invalid_args", "execution_error", "timeout"}


def _get(ctx: Context, path: str) -> httpx.Response:
    return httpx.get(ctx.server_url() + path, timeout=ctx.step_s + 5, trust_env=False)


@check("runtime")
def check_server_starts(ctx: Context) -> str | None:
    """The server starts within timeouts.startup_s and /health answers {"status": "healthy"}."""
    try:
        ctx.server_url()
    except ServerStartError as exc:
        raise Fail(
            f"{exc}; output: {exc.logs[-600:]!r}",
            "run `mcpgym serve ENTRY_POINT` and fix the error",
        ) from None
    body = _get(ctx, "/health").json()
    if body.get("status") != "healthy":
        raise Fail(f"/health said {body!r}", 'answer {"status": "healthy"}')
    return None


@check("runtime", needs=("check_server_starts",))
def check_schema_endpoint(ctx: Context) -> str | None:
    """GET /schema gives action, observation and state as valid JSON Schemas (Draft 2020-12)."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    body = _get(ctx, "/schema").json()
    for key in ("action", "observation", "state"):
        if not isinstance(body.get(key), dict):
            raise Fail(f"/schema has no {key!r} schema", "serve through mcpgym's create_app")
        try:
            Draft202012Validator.check_schema(body[key])
        except SchemaError as exc:
            raise Fail(f"/schema {key}: {exc.message}", "fix the model's JSON Schema") from None
    ctx.cache["schema"] = body
    return None


@check("runtime", needs=("check_server_starts",))
def check_episode(ctx: Context) -> str | None:
    """reset → tools/list → the probe's steps → state: every reply has the wire envelope."""
    spec = ctx.specs()[0]
    traj = replay(ctx, spec)
    if traj.error and _non_finite(traj.error):
        # strict JSON: the server refuses to send NaN/Infinity, so such a reward or observation
        # value never reaches a client — it shows here, as an unanswerable step
        raise Fail(
            f"episode {spec.id}: a step's reward or observation is NaN or Infinity; the server "
            "refuses to send it (strict JSON)",
            "return a finite float from reward() and finite numbers in observations",
        )
    if traj.error:
        raise Fail(f"episode {spec.id}: {traj.error}", "make reset/step answer observation frames")
    for i, f in enumerate([traj.reset_frame, *traj.frames]):
        d = f.get("data") or {}
        if not isinstance(d.get("observation"), dict) or not isinstance(d.get("done"), bool):
            raise Fail(f"reply {i} lacks observation/done: {f!r:.300}", "return an Observation")
    ctx.cache["runtime_trajs"] = [traj]
    return count(len(traj.frames), "step")


@check("runtime", needs=("check_episode",))
def check_reward_range(ctx: Context) -> str | None:
    """Every step's reward is a finite number (not a bool, not NaN) within [reward.min, max]."""
    m = ctx.require_manifest()
    if m.reward is None:
        raise Fail("the manifest declares no reward range", "add reward: {min: 0, max: 1}")
    trajs = list(ctx.cache.get("runtime_trajs", []))
    trajs += [replay(ctx, s) for s in ctx.sample("reward_range", 3, ctx.specs()[1:])]
    for t in trajs:
        if t.error and _non_finite(t.error):
            raise Fail(
                f"{t.spec_id}: the server refused to send a step whose reward or observation "
                "is NaN or Infinity (strict JSON)",
                "return a finite float from reward() and finite numbers in observations",
            )
        for i, r in enumerate(t.rewards):
            where = f"{t.spec_id} step {i + 1}"
            if isinstance(r, bool) or not isinstance(r, int | float):
                raise Fail(f"{where}: reward is {json.dumps(r)}", "return a float from reward()")
            if not math.isfinite(r):
                raise Fail(f"{where}: reward is {r}", "return a finite float from reward()")
            if not m.reward.min <= r <= m.reward.max:
                raise Fail(
                    f"{where}: reward {r} outside [{m.reward.min}, {m.reward.max}]",
                    "fix the rubric or the declared reward range",
                )
    return f"{sum(len(t.rewards) for t in trajs)} rewards"


def _non_finite(error: object) -> bool:
    """The server's strict-JSON refusal of a reply holding NaN or Infinity."""
    return "Out of range float values are not JSON compliant" in str(error)


def _tool_results(traj: Any, tools: dict[str, dict[str, Any]]) -> list[str]:
    from jsonschema import Draft202012Validator

    problems = []
    for f in traj.frames:
        obs = (f.get("data") or {}).get("observation") or {}
        model = CallToolObservation if "tool_name" in obs else ListToolsObservation
        try:
            model.model_validate({**obs, "reward": None, "done": False})
        except Exception as exc:
            problems.append(f"{model.__name__}: {str(exc)[:200]}")
            continue
        out = (tools.get(obs.get("tool_name", "")) or {}).get("outputSchema")
        if out and obs.get("error") is None and "tool_name" in obs:
            value = obs.get("result")
            if out.get("x-mcpgym-wrap-result"):
                value = {"result": value}
            for err in Draft202012Validator(out).iter_errors(value):
                problems.append(f"{obs['tool_name']} result: {err.message}")
    return problems


@check("runtime", needs=("check_episode", "check_schema_endpoint"))
def check_observation_schema(ctx: Context) -> str | None:
    """Observations fit /schema and the tool observation models; results fit outputSchema."""
    from jsonschema import Draft202012Validator

    schema = ctx.cache["schema"]["observation"]
    traj = ctx.cache["runtime_trajs"][0]
    first = dict((traj.reset_frame.get("data") or {}).get("observation") or {})
    data = traj.reset_frame.get("data") or {}
    first.update(reward=data.get("reward"), done=data.get("done"))
    problems = [f"reset: {e.message}" for e in Draft202012Validator(schema).iter_errors(first)]
    problems += _tool_results(traj, {t["name"]: t for t in sim_tools(ctx)})
    if problems:
        raise Fail("; ".join(problems[:3]), "make observations match their declared models")
    return None


@check("runtime", needs=("check_episode",))
def check_state_contract(ctx: Context) -> str | None:
    """state carries reset's episode_id; step_count starts at 0, +1 per step; reading is no step."""
    s = ctx.session()
    try:
        spec = ctx.specs()[0]
        s.send({"type": "reset", "data": {**dict(spec.reset), "episode_id": "validate-state"}})
        st = (s.state().get("data")) or {}
        if st.get("episode_id") != "validate-state" or st.get("step_count") != 0:
            raise Fail(f"after reset state is {st!r:.200}", "reset() must set episode_id, step 0")
        s.step({"type": "list_tools"})
        s.state()
        st = (s.state().get("data")) or {}
        if st.get("step_count") != 1:
            raise Fail(
                f"after one step step_count is {st.get('step_count')}",
                "count each step once; reading state is not a step",
            )
    finally:
        s.close()
    return None


@check("runtime", needs=("check_server_starts", "check_declared_tools"))
def check_tool_modes(ctx: Context) -> str | None:
    """In each mode exactly the declared tools are listed, and a hidden tool is unknown there."""
    m = ctx.require_manifest()
    if m.tools is None:
        raise Skip("the manifest declares no tools (see check_declared_tools)")
    seen = []
    # a --url server serves one mode (simulation): the others are not there to check
    modes = ["simulation"] if ctx.url is not None else m.modes
    unchecked = [mode for mode in m.modes if mode not in modes]
    for mode in modes:
        want = {t.name for t in m.tools if mode in t.modes}
        hidden = sorted({t.name for t in m.tools} - want)
        mcp = McpHttp(ctx.server_url(mode), timeout=ctx.step_s + 5)
        try:
            got = {t["name"] for t in mcp.tools()}
            if got != want:
                raise Fail(
                    f"{mode}: listed {sorted(got)}, declared {sorted(want)}",
                    "tag tools with @tool(mode=...) as the manifest says (or fix the manifest)",
                )
            for name in hidden[:3]:
                reply = mcp.request("tools/call", {"name": name, "arguments": {}})
                if "error" not in reply:
                    raise Fail(f"{mode}: hidden tool {name!r} answered", "hide it in this mode")
        finally:
            mcp.close()
        seen.append(f"{mode} {len(want)}")
    note = f" ({', '.join(unchecked)}: not served at --url)" if unchecked else ""
    return ", ".join(seen) + note


@check("runtime", needs=("check_episode",))
def check_invalid_action(ctx: Context) -> str | None:
    """Malformed frames and bad tool calls get structured errors; the session and server live on."""
    spec = ctx.specs()[0]
    cases = hostile_frames(sim_tools(ctx))
    for what, text in cases:
        s = ctx.session()
        try:
            s.reset(**dict(spec.reset))
            try:
                reply = s.send_raw(text)
            except WireError as exc:
                srv = ctx.server()
                gone = srv is not None and srv.wait_exit(2.0)  # closed because it died?
                died = " (the server process exited)" if gone else ""
                fix = "answer bad input with an error, never crash"
                raise Fail(f"{what}: {exc}{died}", fix) from None
            d = reply.get("data") or {}
            if reply.get("type") == "error":
                ok = d.get("code") in WS_CODES and isinstance(d.get("message"), str)
            else:
                err = (d.get("observation") or {}).get("error") or {}
                ok = err.get("error_type") in TOOL_ERRORS and bool(err.get("message"))
            if not ok:
                raise Fail(f"{what}: answered {reply!r:.300}", "return a structured error")
            try:
                again = s.reset(**dict(spec.reset))
            except WireError as exc:
                raise Fail(
                    f"after {what}: {exc}", "keep the session usable after bad input"
                ) from None
            if again.get("type") != "observation":
                raise Fail(
                    f"after {what}: reset answered {again!r:.200}", "keep the session usable"
                )
        finally:
            s.close()
    return f"{len(cases)} hostile inputs"


@check("runtime", needs=("check_episode",))
def check_step_timeout(ctx: Context) -> str | None:
    """Every tool, called with minimal arguments, finishes within timeouts.step_s."""
    spec = ctx.specs()[0]
    slow = []
    for t in sim_tools(ctx):
        s = ctx.session(timeout=ctx.step_s + 5)
        try:
            s.reset(**dict(spec.reset))
            began = time.monotonic()
            try:
                reply = s.call(t["name"], empty_arguments(t.get("inputSchema") or {}), ctx.step_s)
            except WireError as exc:
                slow.append(f"{t['name']}: {exc}")
                continue
            err = ((reply.get("data") or {}).get("observation") or {}).get("error") or {}
            if err.get("error_type") == "timeout" or time.monotonic() - began > ctx.step_s + 2:
                slow.append(f"{t['name']}: not done within {ctx.step_s:g} s")
        finally:
            s.close()
    if slow:
        raise Fail("; ".join(slow), "make tools return promptly (or raise timeouts.step_s)")
    return None


@check("runtime", needs=("check_episode",))
def check_determinism(ctx: Context) -> str | None:
    """The same seed and actions give the same observations, in two fresh sessions."""
    chosen = ctx.sample("determinism", 2)
    for spec in chosen:
        a, b = replay(ctx, spec), replay(ctx, spec)
        if a.observations() != b.observations():
            raise Fail(
                f"{spec.id}: two runs differ",
                "derive all randomness from reset's seed",
                first=_diff(a.observations(), b.observations()),
            )
    return f"{ctx.sampled(len(chosen))} played twice"


def _diff(a: list[Any], b: list[Any]) -> str:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            left, right = json.dumps(x, default=str)[:200], json.dumps(y, default=str)[:200]
            return f"step {i}: {left} vs {right}"
    return f"lengths {len(a)} vs {len(b)}"


@check("runtime", needs=("check_determinism",))
def check_isolation(ctx: Context) -> str | None:
    """Nothing carries over: an episode after another one in the same session plays the same."""
    spec = ctx.specs()[0]
    s = ctx.session()
    try:
        first = replay(ctx, spec, s)
        seed = (spec.seed or 0) + 1  # another episode in between: another seed's probe
        other = replace(spec, id=f"{spec.id}@{seed}", reset={**dict(spec.reset), "seed": seed})
        replay(ctx, other, s)
        second = replay(ctx, spec, s)
    finally:
        s.close()
    if first.observations() != second.observations():
        raise Fail(
            "the episode after another one differs: "
            + _diff(first.observations(), second.observations()),
            "rebuild all episode state in reset()",
        )
    return None


@check("runtime", needs=("check_determinism",))
def check_seed_control(ctx: Context) -> str | None:
    """reset(seed=...) is honoured: other seeds give other episodes."""
    if ctx.manifest is not None and not ctx.manifest.episode.seeded:
        raise NotApplicable("episode.seeded is false")
    spec = ctx.specs()[0]
    seed = spec.seed if spec.seed is not None else 0
    first = replay(ctx, spec)
    if first.error:
        raise Fail(f"{spec.id}: {first.error}", "make the episode play without errors")
    for other in (seed + 1, seed + 2, seed + 3):
        alt = replace(spec, id=f"{spec.id}@{other}", reset={**dict(spec.reset), "seed": other})
        played = replay(ctx, alt)
        if played.error is None and played.observations() != first.observations():
            return None
    raise Fail(
        "seeds 1-3 apart play identically",
        "seed the episode's randomness from reset(seed) (or declare episode.seeded: false)",
    )


@check("runtime", needs=("check_episode",))
def check_oracle_containment(ctx: Context) -> str | None:
    """No tool hands the agent the answer: a planted canary never appears in a tool result."""
    m = ctx.require_manifest()
    if not m.canaries:
        raise Skip("no canary declared (canaries: [{option, kind}])")
    rng = ctx.rng("containment")
    played = 0
    for i, c in enumerate(m.canaries):
        spec, value = planted_spec(ctx, i)
        scripts = [[call(made.tool, made.arguments) for made in c.calls]] if c.calls else []
        for t in sim_tools(ctx):
            schema = t.get("inputSchema") or {}
            tries = [empty_arguments(schema)] + [random_arguments(schema, rng) for _ in range(2)]
            scripts.append([call(t["name"], a) for a in tries])
        played += len(scripts)
        for script in scripts:
            traj = run(ctx, spec, scripted(script))
            for f, sent in zip(traj.frames, script, strict=False):
                obs = (f.get("data") or {}).get("observation") or {}
                if obs.get("error") is None and value in json.dumps(obs.get("result"), default=str):
                    raise Fail(
                        f"tool {sent['tool_name']!r} returned the planted answer",
                        "no tool may read the answer, the oracle or the grader",
                    )
    return f"{count(len(m.canaries), 'canary', 'canaries')}, {count(played, 'call script')}"
