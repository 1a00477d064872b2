"""TRL's `GRPOTrainer(environment_factory=...)` for any mcpgym environment.

    from trl import GRPOConfig, GRPOTrainer
    from mcpgym.integrations.trl import environment_factory
    from mcpgym.examples.guess import GuessEnv

    trainer = GRPOTrainer(model=..., args=GRPOConfig(...), train_dataset=dataset,
                          environment_factory=environment_factory(GuessEnv))

What TRL 1.16 does with the class it is given (read from its source): every public function of the
class except `reset` and `get_reward` is a tool, described to the model by
`transformers.utils.get_json_schema` (type hints and a Google-style `Args:` docstring);
`reset(**row)` gets every column of the dataset row and may return text for the prompt;
`get_reward()` is called once per finished rollout; a tool that raises is answered
`{"error": str(exc)}` and counted in `tools/failure_frequency`.

So the class made here has exactly those public functions: one per tool the environment shows in
simulation mode (signature and docstring generated from its schema; see `_signature`), `reset`
and `get_reward`. A failed call (unknown tool, invalid arguments, a business error, a call after
the episode ended) raises, so TRL counts it, with the environment's structured error as JSON for
its message, so the model reads what to correct. Everything the episode did is in
`episode_of(env)`.

The environment runs in this process (a class or factory), at a server URL (`SyncEnvClient`), or
over a pool (`SyncEnvPool`, or any object whose `session()` yields a `SyncEnvClient`).
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from mcpgym._hints import jsonable
from mcpgym.integrations._sessions import Outcome, Session, Source, source_for
from mcpgym.integrations._signature import UNSET, MethodPlan
from mcpgym.tasks import Task, TaskSet
from mcpgym.types import ToolInfo

__all__ = [
    "Episode",
    "ToolCall",
    "ToolCallFailed",
    "environment_factory",
    "episode_of",
    "prompt_tokens",
    "trainer_tools",
]

RewardRule = Literal["sum", "last"] | Callable[["Episode"], float]
_RESERVED = frozenset({"reset", "get_reward"})


class ToolCallFailed(Exception):
    """A tool call the environment refused; `str()` is the structured error as JSON."""

    def __init__(self, error: Mapping[str, Any]) -> None:
        self.error = dict(error)
        super().__init__(json.dumps({"error": self.error}, ensure_ascii=False, default=str))


@dataclass
class ToolCall:
    """One tool call of an episode: what the model sent and what came back."""

    name: str
    arguments: dict[str, Any]
    result: Any = None
    error: dict[str, Any] | None = None
    reward: float | None = None
    done: bool = False


@dataclass
class Episode:
    """What one rollout did: the row TRL passed to `reset`, the options sent, the calls."""

    row: dict[str, Any] = field(default_factory=dict[str, Any])
    reset_options: dict[str, Any] = field(default_factory=dict[str, Any])
    task: Task | None = None
    metadata: dict[str, Any] = field(default_factory=dict[str, Any])
    calls: list[ToolCall] = field(default_factory=list[ToolCall])
    done: bool = False
    reward_calls: int = 0

    @property
    def rewards(self) -> list[float]:
        """Each call's reward (`None` as 0)."""
        return [c.reward or 0.0 for c in self.calls]

    @property
    def errors(self) -> int:
        """How many calls failed."""
        return sum(c.error is not None for c in self.calls)


def episode_of(env: Any) -> Episode:
    """The current episode of an adapter instance (a class made by `environment_factory`)."""
    found = getattr(env, "_mcpgym_episode", None)
    if not isinstance(found, Episode):
        raise TypeError(f"{type(env).__name__} is not an mcpgym trainer adapter")
    return found


@dataclass(frozen=True)
class _Config:
    source: Source
    tasks: TaskSet | None
    reset_columns: dict[str, str]
    reward: RewardRule


class _Adapter:
    """Base of the generated classes: `reset`, `get_reward` and the private call path."""

    _mcpgym: ClassVar[_Config]

    def __init__(self) -> None:
        self._mcpgym_session: Session = self._mcpgym.source.open()
        self._mcpgym_episode = Episode()
        weakref.finalize(self, self._mcpgym_session.close)

    def reset(self, **row: Any) -> str | None:
        """Start an episode for one dataset row (every column arrives; see `environment_factory`).

        Returns the task's prompt when the row brings none, so a task set alone can drive training.
        """
        config = self._mcpgym
        options: dict[str, Any] = {}
        for column, option in config.reset_columns.items():
            if column in row and row[column] is not None:
                options[option] = row[column]
        task: Task | None = None
        if config.tasks is not None:
            task = config.tasks.select(options)
            options = config.tasks.resolve_reset(options)
        outcome = self._mcpgym_session.reset(options)
        self._mcpgym_episode = Episode(
            row=dict(row), reset_options=options, task=task, metadata=outcome.metadata
        )
        if task is not None and not _has_prompt(row) and isinstance(task.get("prompt"), str):
            return str(task["prompt"])
        return None

    def get_reward(self) -> float:
        """The episode's reward (by default the sum of its steps' rewards)."""
        episode = self._mcpgym_episode
        episode.reward_calls += 1
        rule = self._mcpgym.reward
        if rule == "sum":
            return float(sum(episode.rewards))
        if rule == "last":
            return float(episode.rewards[-1]) if episode.calls else 0.0
        return float(rule(episode))

    def _mcpgym_call(self, name: str, arguments: dict[str, Any]) -> str:
        episode = self._mcpgym_episode
        call = ToolCall(name=name, arguments=arguments)
        episode.calls.append(call)
        if episode.done:
            call.error = {
                "error_type": "episode_over",
                "message": "The episode is over: no further tool calls are possible.",
            }
            raise ToolCallFailed(call.error)
        outcome: Outcome = self._mcpgym_session.call(name, arguments)
        call.result, call.error, call.reward, call.done = (
            outcome.result,
            outcome.error,
            outcome.reward,
            outcome.done,
        )
        episode.done = outcome.done
        if outcome.done:
            episode.metadata.update(outcome.metadata)
        if outcome.error is not None:
            raise ToolCallFailed(outcome.error)
        return _as_text(outcome.result)


def _has_prompt(row: Mapping[str, Any]) -> bool:
    prompt = row.get("prompt")
    if isinstance(prompt, list):
        return any(isinstance(m, Mapping) and m.get("content") for m in prompt)
    return bool(prompt)


def _as_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    return json.dumps(jsonable(result), ensure_ascii=False, default=str)


def _method(plan: MethodPlan, qualname: str) -> Callable[..., str]:
    tool, wire = plan.name, plan.wire_names

    def call(self: _Adapter, **kwargs: Any) -> str:
        arguments = {wire.get(k, k): v for k, v in kwargs.items() if v is not UNSET}
        return self._mcpgym_call(tool, arguments)

    call.__name__ = tool
    call.__qualname__ = f"{qualname}.{tool}"
    call.__doc__ = plan.docstring
    call.__signature__ = plan.signature  # type: ignore[attr-defined]
    call.__annotations__ = dict(plan.annotations)
    return call


def _chosen(
    tools: list[ToolInfo], include: Iterable[str] | None, exclude: Iterable[str]
) -> list[ToolInfo]:
    names = [t.name for t in tools]
    wanted = list(include) if include is not None else names
    unknown = [n for n in [*wanted, *exclude] if n not in names]
    if unknown:
        raise ValueError(f"no tool(s) {unknown}; the environment's tools: {names}")
    dropped = set(exclude)
    picked = [t for t in tools if t.name in wanted and t.name not in dropped]
    clash = [t.name for t in picked if t.name in _RESERVED or t.name.startswith("_")]
    if clash:
        raise ValueError(
            f"tool(s) {clash} cannot be trainer methods (TRL reserves reset and get_reward and "
            "hides names starting with '_'); leave them out with exclude_tools="
        )
    return picked


def environment_factory(
    env: Any,
    *,
    tasks: TaskSet | None = None,
    reset_columns: Sequence[str] | Mapping[str, str] = ("task_id", "split", "index", "seed"),
    tools: Iterable[str] | None = None,
    exclude_tools: Iterable[str] = (),
    reward: RewardRule = "sum",
    probe_reset: Mapping[str, Any] | None = None,
    client_options: Mapping[str, Any] | None = None,
    name: str | None = None,
) -> type:
    """A class to pass as `GRPOTrainer(environment_factory=...)`: one instance per rollout.

    Args:
        env: an `MCPEnvironment` class or zero-argument factory (in process), a server URL
            (simulation mode), or a pool (`SyncEnvPool`, or anything whose `session()` is a
            context manager yielding a `SyncEnvClient`).
        tasks: a task set (`mcpgym.tasks.from_dataset(...)`, the environment's `task_set`, ...):
            `task_id` (or `split` + `index`) of a row is resolved to the task's reset options
            here. Without it they go to the environment's `reset`, which resolves them with its
            own task set (Calendar Gym) or rejects them.
        reset_columns: the row columns that become reset options: names, or
            `{column: option}`; every other column (`prompt`, ...) is accepted and ignored.
        tools: expose only these tools (default: every tool visible in simulation mode).
        exclude_tools: leave these tools out.
        reward: what `get_reward` returns: `"sum"` of the step rewards (default), the `"last"`
            step's reward, or a function of the `Episode`.
        probe_reset: reset options for the throwaway episode that lists a server's tools.
        client_options: keyword arguments for each `SyncEnvClient` (`timeout`, `headers`).
        name: the class name (TRL logs `get_reward` under it); default `<Env>ForTRL`.

    Example:
        >>> from mcpgym.examples.guess import GuessEnv
        >>> Guess = environment_factory(GuessEnv)
        >>> sorted(n for n in dir(Guess) if not n.startswith("_"))
        ['get_reward', 'guess', 'hint', 'reset']
    """
    source = source_for(env, client_options=client_options, probe_reset=probe_reset)
    columns = (
        dict(reset_columns) if isinstance(reset_columns, Mapping) else {c: c for c in reset_columns}
    )
    picked = _chosen(source.tools(), tools, exclude_tools)
    class_name = name or f"{source.label}ForTRL"
    listed = ", ".join(t.name for t in picked) or "(none)"
    namespace: dict[str, Any] = {
        "__doc__": f"{source.label} for TRL: tools {listed}.",
        "__module__": __name__,
    }
    for info in picked:
        plan = MethodPlan.build(info.name, info.description, info.input_schema)
        namespace[info.name] = _method(plan, class_name)
    namespace["_mcpgym"] = _Config(
        source=source,
        tasks=tasks,
        reset_columns={str(k): str(v) for k, v in columns.items()},
        reward=reward,
    )
    return type(class_name, (_Adapter,), namespace)


def trainer_tools(adapter: type) -> list[Callable[..., str]]:
    """The tool functions TRL's `GRPOTrainer` finds on an adapter class, in its order (what the
    chat template renders into every prompt)."""
    if not issubclass(adapter, _Adapter):
        raise TypeError(f"{adapter!r} is not a class made by environment_factory")
    names = sorted(n for n in dir(adapter) if not n.startswith("_") and n not in _RESERVED)
    return [getattr(adapter, n) for n in names]


def prompt_tokens(tokenizer: Any, adapter: type, prompt: str | Sequence[Mapping[str, Any]]) -> int:
    """How many tokens a prompt is with an adapter's tools, rendered as `GRPOTrainer` renders it
    (the chat template, the tools' JSON Schemas, the generation prompt): the budget a tool set
    takes from the context before the model writes a token.

    Example (any tokenizer with a chat template; nothing here needs a model):
        >>> n = prompt_tokens(tokenizer, Adapter, "Book a haircut.")  # doctest: +SKIP
    """
    messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)
    rendered = tokenizer.apply_chat_template(
        messages,
        tools=trainer_tools(adapter) or None,
        add_generation_prompt=True,
        tokenize=True,
        return_dict=True,
    )
    return len(rendered["input_ids"])
