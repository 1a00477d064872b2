"""Agents by name: the built-ins (`random`, `llm`), plugins, and `MODULE:ATTR`.

`load_agent("random", AgentOptions(seed=1))` finds a name among the built-ins, then among the
`mcpgym.agents` entry points of installed packages (how `calendar_gym` adds `oracle` and
`naive`), and otherwise imports `MODULE:ATTR`. What it finds is an *agent factory*: called with
the `AgentOptions` when it has a required positional parameter or one named `options`, with
nothing otherwise; an `Agent` instance found at `MODULE:ATTR` is used as is.

`RandomAgent` is the baseline: each turn it calls a random listed tool with random arguments
that satisfy the tool's JSON Schema (required properties only), from a random generator seeded
by the agent's seed and the spec, so runs repeat exactly.

Example:
    >>> agent = load_agent("random", AgentOptions(seed=1))
    >>> agent.name, "llm" in available_agents()
    ('random', True)
    >>> minimal_arguments({"type": "object", "required": ["n"],
    ...     "properties": {"n": {"type": "integer", "minimum": 3, "maximum": 3}}}, random.Random(0))
    {'n': 3}
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, cast

from mcpgym.harness.episodes import AgentAction, EpisodeSpec
from mcpgym.types import Observation, StepResult, ToolInfo

__all__ = [
    "AgentOptions",
    "RandomAgent",
    "available_agents",
    "load_agent",
    "minimal_arguments",
    "register_agent",
]


@dataclass(frozen=True, slots=True)
class AgentOptions:
    """What the command line passes to an agent factory."""

    model_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    seed: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict[str, Any])
    model_timeout: float | None = None
    temperature: float | None = 0.0
    max_tokens: int | None = None
    sampling: Mapping[str, Any] = field(default_factory=dict[str, Any])
    compact_tools: bool = False
    tools: tuple[str, ...] | None = None


AgentFactory = Callable[..., Any]

_REGISTRY: dict[str, AgentFactory] = {}


def register_agent(name: str, factory: AgentFactory) -> None:
    """Make `factory` loadable as `name` in this process (plugins use the entry point group
    `mcpgym.agents` instead)."""
    _REGISTRY[name] = factory


def available_agents() -> list[str]:
    """Built-in, registered and entry-point agent names."""
    return sorted({*_REGISTRY, *(ep.name for ep in entry_points(group="mcpgym.agents"))})


def load_agent(name: str, options: AgentOptions | None = None) -> Any:
    """The agent called `name` (registry, then entry points) or found at `MODULE:ATTR`.

    Raises `ValueError` with the names available when nothing matches.
    """
    options = options or AgentOptions()
    factory: Any = _REGISTRY.get(name)
    if factory is None:
        found = [ep for ep in entry_points(group="mcpgym.agents") if ep.name == name]
        if found:
            try:
                factory = found[0].load()
            except ImportError as exc:  # e.g. calendar_gym's agents without the [calendar] extra
                raise ValueError(f"cannot load agent {name!r} ({found[0].value}): {exc}") from None
        elif ":" in name:
            from mcpgym.servers.factory import load_target

            factory = load_target(name)
        else:
            raise ValueError(
                f"unknown agent {name!r}; available: {', '.join(available_agents())} "
                "(or MODULE:ATTR)"
            )
    if hasattr(factory, "start") and hasattr(factory, "name") and not inspect.isclass(factory):
        return factory
    if not callable(factory):
        raise ValueError(f"{name!r} is neither an agent nor an agent factory")
    make = cast(Callable[..., Any], factory)
    try:
        agent = make(options) if _takes_options(make) else make()
    except TypeError as exc:
        raise ValueError(f"cannot make agent {name!r}: {exc}") from exc
    if not (hasattr(agent, "start") and hasattr(agent, "name")):
        raise ValueError(f"{name!r} made {type(agent).__name__}, which is not an Agent")
    return agent


def _takes_options(factory: Any) -> bool:
    """A required positional parameter, or one called `options`, receives the `AgentOptions`."""
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return "options" in params or any(
        p.default is p.empty and p.kind in positional for p in params.values()
    )


# -- the random agent ------------------------------------------------------------------------------


def minimal_arguments(schema: Mapping[str, Any], rng: random.Random) -> Any:
    """A random value satisfying `schema` (required properties only; `$ref` into `$defs`)."""
    return _value(schema, rng, schema.get("$defs", {}), depth=0)


def _value(
    schema: Mapping[str, Any], rng: random.Random, defs: Mapping[str, Any], depth: int
) -> Any:
    if depth > 8:
        return None
    if "$ref" in schema:
        target = defs.get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
        return _value(target, rng, defs, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return rng.choice(list(schema["enum"]))
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf", "allOf"):
        options = [o for o in schema.get(key, []) if o.get("type") != "null"]
        if options:
            return _value(options[0], rng, defs, depth + 1)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "integer":
        lo = int(schema.get("minimum", schema.get("exclusiveMinimum", -1) + 1))
        hi = int(schema.get("maximum", schema.get("exclusiveMaximum", lo + 101) - 1))
        return rng.randint(lo, max(lo, hi))
    if kind == "number":
        lo = float(schema.get("minimum", 0.0))
        return round(rng.uniform(lo, float(schema.get("maximum", lo + 100.0))), 3)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "string":
        return "x" * int(schema.get("minLength", 0))
    if kind == "array":
        items = schema.get("items", {})
        return [_value(items, rng, defs, depth + 1) for _ in range(int(schema.get("minItems", 0)))]
    if kind == "object":
        props: Mapping[str, Any] = schema.get("properties", {})
        return {
            k: _value(props.get(k, {}), rng, defs, depth + 1) for k in schema.get("required", [])
        }
    return None


class RandomAgent:
    """Calls a random listed tool with random schema-conforming arguments, every turn.

    It never stops by itself: the episode ends when the environment is done or at `max_steps`.
    """

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def start(self, spec: EpisodeSpec, tools: list[ToolInfo]) -> _RandomEpisode:
        return _RandomEpisode(random.Random(f"{self.seed}:{spec.id}:{spec.seed}"), tools)


class _RandomEpisode:
    def __init__(self, rng: random.Random, tools: list[ToolInfo]) -> None:
        self.rng = rng
        self.tools = sorted(tools, key=lambda t: t.name)

    async def act(self, result: StepResult[Observation]) -> AgentAction:
        if not self.tools:
            return None
        tool = self.rng.choice(self.tools)
        arguments = minimal_arguments(tool.input_schema, self.rng)
        return {"type": "call_tool", "tool_name": tool.name, "arguments": arguments or {}}

    async def aclose(self) -> None:
        return None


def _llm(options: AgentOptions) -> Any:
    from mcpgym.harness.llm.agent import LLMAgent

    if not options.model_url or not options.model:
        raise ValueError("the llm agent needs --model-url and --model")
    from mcpgym.harness.llm.agent import DEFAULT_MODEL_TIMEOUT

    return LLMAgent(
        options.model_url,
        options.model,
        api_key=options.api_key,
        temperature=options.temperature,
        max_tokens=options.max_tokens,
        sampling=options.sampling,
        timeout=options.model_timeout or DEFAULT_MODEL_TIMEOUT,
        compact_tools=options.compact_tools,
        tools=options.tools,
    )


def _random(options: AgentOptions) -> RandomAgent:
    return RandomAgent(seed=options.seed)


register_agent("random", _random)
register_agent("llm", _llm)
