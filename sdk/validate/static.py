"""Level 1, static: the manifest, the entry point, dependency pinning, tools, resources, policies.

Nothing is served: these checks read the manifest and import the environment's code.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from mcpgym.checker import EnvCheckError, check_env
from mcpgym.env import Environment
from mcpgym.manifest import MANIFEST_NAMES
from mcpgym.mcp_env import MCPEnvironment
from mcpgym.targets import describe_exception
from mcpgym.tools import RESERVED_NAMES
from mcpgym.validate.base import Fail, NotApplicable, Skip, check
from mcpgym.validate.context import Context

__all__ = ["PROTOCOL_NAMES", "code_tools"]

PROTOCOL_NAMES = frozenset({"list_tools", "call_tool", "tools/list", "tools/call"})
"""Names the wire protocol uses for itself: a tool called so is confused with the action."""


def code_tools(ctx: Context) -> dict[str, Any]:
    """The `@tool`s of the entry point's class (by name), or `NotApplicable` for non-MCP envs."""
    obj = ctx.env_object()
    cls = obj if isinstance(obj, type) else type(_instance(ctx))
    if not issubclass(cls, MCPEnvironment):
        raise NotApplicable(f"{cls.__name__} is not an MCPEnvironment (it has no tools)")
    return dict(cls.tool_specs)


def _instance(ctx: Context) -> Environment[Any, Any, Any]:
    if "instance" not in ctx.cache:
        obj = ctx.env_object()
        env = obj()
        if not isinstance(env, Environment):
            raise Fail(
                f"{ctx.entry_point}() returned {type(env).__name__}, not an Environment",
                "point entry_point at an Environment subclass or a factory returning one",
            )
        ctx.cache["instance"] = env
    return ctx.cache["instance"]


@check("static")
def check_manifest(ctx: Context) -> str | None:
    """The manifest exists and fits the schema (unknown keys rejected at every level)."""
    if ctx.manifest_error is not None:
        problems = ctx.manifest_error.problems
        raise Fail(
            "; ".join(f"{p.path}: {p.message}" for p in problems),
            "; ".join(f"{p.path}: {p.fix}" for p in problems),
            problems=[{"path": p.path, "message": p.message, "fix": p.fix} for p in problems],
        )
    if ctx.manifest is None:
        raise Fail(
            f"no manifest found for {ctx.label}",
            f"add {MANIFEST_NAMES[0]} beside the code (`mcpgym init NAME` writes one)",
        )
    return f"{ctx.manifest.name} {ctx.manifest.version}"


@check("static")
def check_entry_point(ctx: Context) -> str | None:
    """The entry point imports and is an Environment class or a factory returning one."""
    if not ctx.entry_point:
        raise Skip("no entry point (see check_manifest)")
    try:
        obj = ctx.env_object()
    except ValueError as exc:  # mcpgym.targets: one line, "...; fix: ..."
        problem, _, fix = str(exc).partition("; fix: ")
        raise Fail(problem, fix or "fix entry_point (MODULE:ATTR) or the import error") from None
    if isinstance(obj, type) and not issubclass(obj, Environment):
        raise Fail(f"{obj.__qualname__} is not an Environment", "subclass MCPEnvironment")
    if not callable(obj):
        raise Fail(f"{ctx.entry_point} is not callable", "point at a class or a factory")
    try:
        _instance(ctx)
    except Fail:
        raise
    except Exception as exc:
        raise Fail(
            f"making an instance raised {describe_exception(exc)}",
            "the class must build with no arguments",
        ) from None
    return ctx.entry_point


@check("static", needs=("check_entry_point",))
def check_contract(ctx: Context) -> str | None:
    """The Gymnasium-style contract (`check_env`): reset, step, state, tools, close."""
    try:
        passed = check_env(ctx.env_object())
    except EnvCheckError as exc:
        first = next(iter(exc.failures.items()))
        raise Fail(f"{first[0]}: {first[1]}", first[1], failures=exc.failures) from None
    return f"{len(passed)} contract checks"


_PIN = re.compile(r"^mcpgym(\[[^\]]*\])?\s*(==|~=|>=[^,]+,\s*<)")


@check("static")
def check_pinning(ctx: Context) -> str | None:
    """The package's pyproject pins mcpgym (==, ~= or a bounded >=, <) so upgrades are chosen."""
    if ctx.root is None or not (Path(ctx.root) / "pyproject.toml").is_file():
        raise NotApplicable("no pyproject.toml beside the manifest (not a package folder)")
    path = Path(ctx.root) / "pyproject.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise Fail(f"{path} does not parse: {exc}", "fix the TOML") from None
    if data.get("project", {}).get("name") == "mcpgym":
        raise NotApplicable("this is mcpgym itself")
    deps = [str(d).strip() for d in data.get("project", {}).get("dependencies", [])]
    ours = [d for d in deps if re.match(r"^mcpgym\b", d)]
    if not ours:
        raise Fail("mcpgym is not among the dependencies", 'add "mcpgym==X.Y.Z" to dependencies')
    if not any(_PIN.match(d) for d in ours):
        raise Fail(f"mcpgym is not pinned ({ours[0]!r})", 'pin it: "mcpgym==X.Y.Z" or ">=X.Y,<X+1"')
    return ours[0]


@check("static", needs=("check_manifest", "check_entry_point"))
def check_declared_tools(ctx: Context) -> str | None:
    """The manifest's tools are exactly the tools the code defines."""
    m = ctx.require_manifest()
    code = code_tools(ctx)
    if m.tools is None:
        raise Fail("the manifest declares no tools", f"add tools: {sorted(code)}")
    declared = {t.name for t in m.tools}
    undeclared, missing = sorted(set(code) - declared), sorted(declared - set(code))
    if undeclared or missing:
        parts = []
        if undeclared:
            parts.append(f"undeclared in the manifest: {undeclared}")
        if missing:
            parts.append(f"declared but not in the code: {missing}")
        raise Fail("; ".join(parts), "make manifest tools match the @tool methods")
    return f"{len(code)} tools"


@check("static", needs=("check_entry_point",))
def check_reserved_names(ctx: Context) -> str | None:
    """No tool takes a name the episode contract or the wire protocol reserves."""
    names = set(code_tools(ctx))
    if ctx.manifest and ctx.manifest.tools:
        names |= {t.name for t in ctx.manifest.tools}
    bad = sorted(n for n in names if n in RESERVED_NAMES | PROTOCOL_NAMES or n.startswith("_"))
    if bad:
        raise Fail(
            f"reserved tool names: {bad}",
            "rename them (@tool(name=...)); reserved: "
            + ", ".join(sorted(RESERVED_NAMES | PROTOCOL_NAMES)),
        )
    return None


@check("static", needs=("check_entry_point",), severity="warn")
def check_tool_hints(ctx: Context) -> str | None:
    """Every tool argument has a type hint, so its schema tells the agent what to send."""
    loose = [spec for spec in code_tools(ctx).values() if spec.untyped_args]
    if loose:
        first = loose[0]
        raise Fail(
            "; ".join(f"{s.where}: {', '.join(s.untyped_args)} untyped" for s in loose),
            f"annotate them (e.g. {first.untyped_args[0]}: str): an untyped argument is "
            "described to the agent as any JSON",
            tools={s.name: list(s.untyped_args) for s in loose},
        )
    return None


@check("static", needs=("check_manifest",))
def check_resources(ctx: Context) -> str | None:
    """Resources (cpu, memory) and timeouts are declared and consistent."""
    m = ctx.require_manifest()
    r = m.resources
    if r is None or r.cpu is None or r.memory_mb is None:
        raise Fail(
            "resources.cpu / resources.memory_mb are not declared",
            "add resources: {cpu: 1, memory_mb: 512}",
        )
    t = m.timeouts
    if t.step_s > t.startup_s * 20:
        raise Fail(f"step_s {t.step_s} is implausibly long", "lower timeouts.step_s")
    return f"cpu {r.cpu}, {r.memory_mb} MB, step {t.step_s:g} s"


@check("static", needs=("check_manifest",))
def check_policies(ctx: Context) -> str | None:
    """An oracle policy is declared and loads as an agent (and the null policy, if declared)."""
    m = ctx.require_manifest()
    if m.policies.oracle is None:
        raise Fail(
            "no oracle policy: nothing shows the maximum reward is reachable",
            "write an agent that solves every task and set policies.oracle: MODULE:ATTR",
        )
    for which in ("oracle", "null"):
        ref = getattr(m.policies, which)
        if ref is None or ref.startswith("builtin:"):
            continue
        try:
            agent = ctx.load_policy(which)
        except Exception as exc:
            raise Fail(f"policies.{which} {ref!r}: {exc}", "fix the import path") from None
        if not hasattr(agent, "start"):
            raise Fail(
                f"policies.{which} made {type(agent).__name__}, which has no start()",
                "return an agent: start(spec, tools) -> episode with act(result)",
            )
    return None
