"""What an evaluation is made of: episode specs in, agents acting, episode records out.

- `EpisodeSpec` — one episode to run: reset options (incl. the seed), the agent's instruction, a
  step limit, tags that group the report (tier, phrasing, error_mode, …) and free `data` for
  agents that may use it (an oracle's gold plan).
- `Agent` / `AgentEpisode` — the two protocols an agent implements: `start` once per episode,
  then `act` on every result until it returns `None` or the environment says `done`.
- `EpisodeRecord` — one line of `episodes.jsonl`: outcome, counts, every tool call, the final
  observation's metadata (where environments put grading details) and, kept apart in `timing`,
  everything that depends on the clock. Two runs with the same seeds give identical records once
  `timing` is dropped (`EpisodeRecord.deterministic_dump`).

The runner's loop, in short::

    result = reset(**spec.reset)                   # StepResult of the reset
    episode = await agent.start(spec, tools)       # (or a plain return value)
    while True:
        action = await episode.act(result)         # the first call receives the reset result
        if action is None: break                   # done_reason "agent_stopped"
        result = step(action)
        if result.done: break                      # done_reason "done"
        if steps == spec.max_steps: break          # done_reason "max_steps"
    await episode.aclose()

Example:
    >>> spec = EpisodeSpec(id="guess-1", reset={"seed": 1}, prompt="Find the number.",
    ...                    tags={"tier": "T1"})
    >>> spec.seed, spec.group
    (1, 'guess-1')
    >>> [s.id for s in repeat([spec], 2)]
    ['guess-1#0', 'guess-1#1']
    >>> repeat([spec], 2)[1].group
    'guess-1'
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from mcpgym.types import Action, Observation, StepResult, ToolInfo

__all__ = [
    "DEFAULT_MAX_STEPS",
    "DEFAULT_SUCCESS_THRESHOLD",
    "Agent",
    "AgentAction",
    "AgentEpisode",
    "CallRecord",
    "DoneReason",
    "EpisodeRecord",
    "EpisodeSpec",
    "EpisodeTiming",
    "episode_success",
    "repeat",
    "seeded_specs",
]

DEFAULT_MAX_STEPS = 50
"""Step limit of a spec that does not set one."""

DEFAULT_SUCCESS_THRESHOLD = 1.0
"""Final reward at or above which an episode counts as a success when the environment does not
say so itself (`observation.metadata["success"]`)."""

DoneReason = Literal[
    "done", "max_steps", "agent_stopped", "malformed", "turn_timeout", "episode_timeout", "error",
    "infra_error",
]  # fmt: skip
"""Why an episode ended:

- `done` — the environment set `done` on a step;
- `max_steps` — `spec.max_steps` actions were applied without `done`;
- `agent_stopped` — the agent's `act` returned `None`;
- `malformed` — the agent gave up because its model kept answering with malformed tool calls
  (an agent failure, graded like `agent_stopped`; `EpisodeRecord.error` says what was wrong);
- `turn_timeout` — one `act` call (the agent's turn) took longer than the turn timeout;
- `episode_timeout` — the whole episode took longer than the episode timeout;
- `error` — the agent, the environment or the connection raised (see `EpisodeRecord.error`);
- `infra_error` — the pool server under the episode died (`mcpgym.pool.InfrastructureError`):
  not the agent's failure; the runner retries such episodes and a resumed run replays them.
"""

AgentAction = Action | Mapping[str, Any] | None
"""What `AgentEpisode.act` returns: an `Action`, its wire dict (`{"type": "call_tool", ...}`), or
`None` to stop."""


@dataclass(frozen=True, slots=True)
class EpisodeSpec:
    """One episode of an evaluation.

    Attributes:
        id: unique within a run; the key `episodes.jsonl` is resumed by.
        reset: keyword options for the environment's `reset`, including `seed` (and any
            environment-specific option such as a task id).
        prompt: the instruction given to the agent.
        max_steps: the most actions the agent may apply in this episode.
        tags: short labels the report groups by, e.g. `{"tier": "T2", "phrasing": "natural"}`.
        data: anything an agent may use (a gold plan for an oracle); not interpreted by the runner.
        group: what pass@k groups by (the task identity shared by repeated attempts). Default:
            `id` up to its first `#`, so `"task-3#0"` and `"task-3#1"` are two attempts at
            `"task-3"` (see `repeat`).
    """

    id: str
    reset: Mapping[str, Any] = field(default_factory=dict[str, Any])
    prompt: str = ""
    max_steps: int = DEFAULT_MAX_STEPS
    tags: Mapping[str, str] = field(default_factory=dict[str, str])
    data: Mapping[str, Any] = field(default_factory=dict[str, Any])
    group_id: str | None = None

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("EpisodeSpec.id must not be empty")
        if self.max_steps < 1:
            raise ValueError(f"EpisodeSpec.max_steps must be >= 1, got {self.max_steps}")

    @property
    def seed(self) -> int | None:
        """The `seed` reset option, if any."""
        seed = self.reset.get("seed")
        return seed if isinstance(seed, int) else None

    @property
    def group(self) -> str:
        """The pass@k group: `group_id` when set, else `id` up to the first `#`."""
        return self.group_id or self.id.split("#", 1)[0]


def repeat(specs: Iterable[EpisodeSpec], k: int, *, reseed: bool = False) -> list[EpisodeSpec]:
    """`k` attempts at every spec, ids `"<id>#<i>"`, same `group` (for pass@k).

    With `reseed`, attempt `i` adds `i` to the seed (for stochastic environments); otherwise the
    attempts differ only through the agent (e.g. a sampling model).
    """
    out: list[EpisodeSpec] = []
    for spec in specs:
        for i in range(k):
            reset = dict(spec.reset)
            if reseed and spec.seed is not None:
                reset["seed"] = spec.seed + i
            out.append(replace(spec, id=f"{spec.id}#{i}", reset=reset, group_id=spec.group))
    return out


def seeded_specs(
    n: int, seed: int = 0, *, prompt: str = "", max_steps: int = DEFAULT_MAX_STEPS
) -> list[EpisodeSpec]:
    """`n` plain episodes with seeds `seed, seed+1, …` and ids `"seed-<seed>"`.

    Example:
        >>> [s.id for s in seeded_specs(2, seed=10)]
        ['seed-10', 'seed-11']
    """
    return [
        EpisodeSpec(id=f"seed-{s}", reset={"seed": s}, prompt=prompt, max_steps=max_steps)
        for s in range(seed, seed + n)
    ]


# -- agents ----------------------------------------------------------------------------------------


@runtime_checkable
class AgentEpisode(Protocol):
    """One agent's play of one episode; made by `Agent.start`.

    `act` is called with the reset result first, then with each step's result; it returns the next
    action, or `None` to stop. It is not called again after a result with `done=True`. `aclose`
    is always called once at the end (also after errors and timeouts).
    """

    async def act(self, result: StepResult[Observation]) -> AgentAction: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class Agent(Protocol):
    """Something that plays episodes. One `Agent` serves every concurrent episode of a run, so
    per-episode state belongs in the `AgentEpisode` that `start` returns.

    `start` may be a plain or an `async` method.

    Example:
        >>> class Stop:
        ...     name = "stop"
        ...     def start(self, spec, tools):
        ...         return StopEpisode()
        >>> class StopEpisode:
        ...     async def act(self, result):
        ...         return None
        ...     async def aclose(self):
        ...         pass
        >>> isinstance(Stop(), Agent)
        True
    """

    name: str

    def start(
        self, spec: EpisodeSpec, tools: list[ToolInfo]
    ) -> AgentEpisode | Awaitable[AgentEpisode]: ...


# -- records ---------------------------------------------------------------------------------------


class CallRecord(BaseModel):
    """One tool call the agent made, as a classifier needs it.

    `error_type` is null for a successful call, else the tool error's type (`tool_not_found`,
    `invalid_args`, `execution_error`, `timeout`); `error` is the full structured error detail
    the environment returned (message, hints, examples, …). `result` is the tool's result.
    """

    model_config = ConfigDict(extra="forbid")

    step: int
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    error_type: str | None = None
    error: dict[str, Any] | None = None
    result: Any = None
    reward: float | None = None


class EpisodeTiming(BaseModel):
    """Everything clock-dependent about an episode, kept apart so determinism can be checked.

    `agent_s[i]` is how long the agent's i-th turn (`act` call) took; `env_s[i]` how long the
    environment took to apply the i-th action (including the network in URL mode); `model_s[i]`
    how long the i-th model request took (model-backed agents only).
    """

    started_at: float = 0.0
    wall_s: float = 0.0
    reset_s: float = 0.0
    agent_s: list[float] = Field(default_factory=list)
    env_s: list[float] = Field(default_factory=list)
    model_s: list[float] = Field(default_factory=list)


class EpisodeRecord(BaseModel):
    """One line of `episodes.jsonl`: how one episode went.

    Attributes:
        spec_id / group / tags / seed: from the `EpisodeSpec`.
        agent: the agent's `name`.
        reward_total: the sum of every step's reward (`None` rewards count as 0).
        reward_final: the last step's reward (0.0 when no step was taken).
        success: `final_metadata["success"]` when the environment set it, else
            `reward_final >= threshold` (see `episode_success`).
        steps: actions applied to the environment (any kind).
        turns: `act` calls, including a final one that returned `None`.
        tool_calls: `call_tool` actions; `tool_errors` counts failed ones by `error_type`.
        done_reason: why it ended (`DoneReason`); `error` says what went wrong for `"error"`
            and the timeouts.
        final_metadata: the last observation's `metadata` (graders put `grade`, `success` there).
        calls: every tool call in order.
        model_turns: every answer of the agent's model, for model-backed agents (finish reason,
            text, tool calls, the calls rejected before reaching the environment and why,
            token usage); empty for other agents.
        malformed_calls: how many of the model's tool calls were rejected as malformed.
        timing: clock-dependent fields; drop it to compare runs.
    """

    model_config = ConfigDict(extra="forbid")

    spec_id: str
    group: str
    tags: dict[str, str] = Field(default_factory=dict)
    seed: int | None = None
    agent: str
    reward_total: float = 0.0
    reward_final: float = 0.0
    success: bool = False
    steps: int = 0
    turns: int = 0
    tool_calls: int = 0
    tool_errors: dict[str, int] = Field(default_factory=dict)
    done_reason: DoneReason
    error: str | None = None
    final_metadata: dict[str, Any] = Field(default_factory=dict)
    calls: list[CallRecord] = Field(default_factory=list)
    model_turns: list[dict[str, Any]] = Field(default_factory=list)
    malformed_calls: int = 0
    timing: EpisodeTiming = Field(default_factory=EpisodeTiming)

    def deterministic_dump(self) -> dict[str, Any]:
        """The record as JSON data without `timing`: equal for equal seeds and agents."""
        return self.model_dump(mode="json", exclude={"timing"})


def episode_success(
    final_metadata: Mapping[str, Any],
    reward_final: float | None,
    threshold: float = DEFAULT_SUCCESS_THRESHOLD,
) -> bool:
    """The success rule: the environment's own verdict when it gives one, else the reward.

    Example:
        >>> episode_success({"success": False}, 1.0)
        False
        >>> episode_success({}, 1.0), episode_success({}, 0.5, threshold=0.5)
        (True, True)
    """
    verdict = final_metadata.get("success")
    if isinstance(verdict, bool):
        return verdict
    return reward_final is not None and reward_final >= threshold
