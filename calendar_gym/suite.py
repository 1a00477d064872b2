"""The task suite as evaluation episodes, and grading an episode from its record.

`specs()` turns tasks into the runner's `EpisodeSpec`s: one per task x phrasing x error mode, id
`"<task>/<phrasing>/<error_mode>"`, reset options `{"seed", "task", "error_mode"}`, the prompt of
that phrasing (with a preamble stating who the agent is and the frozen "now"), the task's step
limit, tags `tier`, `phrasing`, `error_mode` for the report, and `data` naming the task for the
`oracle` and `naive` agents (and, for a trap and its twin, the `pair` they share, which the
validator's gamer panel scores together). `mcpgym eval --tasks calendar_gym.suite:specs` uses
it as is.

`regrade(record)` grades any `EpisodeRecord` of a task episode by replaying its tool calls on a
fresh in-process `CalendarEnv` with the same reset options: the environment is deterministic, so
the replay reaches the same state. The report uses it for episodes whose last observation carries
no grade (an agent that stopped without calling `finish`).

Example:
    >>> [s.id for s in specs(tasks=["t1-create-haircut"], error_modes=["structured"])]
    ['t1-create-haircut/explicit/structured', 't1-create-haircut/natural/structured']
    >>> parse_spec_id("t1-create-haircut/natural/plain#2")
    ('t1-create-haircut', 'natural', 'plain')
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from calendar_gym.env import CalendarEnv
from calendar_gym.tasks.loader import LATEST, load_suite
from calendar_gym.tasks.model import Phrasing, Task
from calendar_gym.tasks.prompt import prompt
from mcpgym.harness.episodes import EpisodeRecord, EpisodeSpec
from mcpgym.types import CallToolAction

__all__ = ["ERROR_MODES", "PHRASINGS", "parse_spec_id", "prompt", "regrade", "specs"]

PHRASINGS: tuple[Phrasing, ...] = ("explicit", "natural")
ERROR_MODES: tuple[str, ...] = ("structured", "plain")
"""The error modes the benchmark compares by default (`google` is also accepted)."""


def specs(
    version: str = LATEST,
    *,
    phrasings: Iterable[Phrasing] = PHRASINGS,
    error_modes: Iterable[str] = ERROR_MODES,
    tiers: Iterable[str] | None = None,
    tasks: Iterable[str] | None = None,
    seed: int = 0,
) -> list[EpisodeSpec]:
    """Episodes for the suite: every selected task x phrasing x error mode (see module doc)."""
    suite = load_suite(version)
    chosen = [suite.get(t) for t in tasks] if tasks is not None else list(suite)
    if tiers is not None:
        wanted = set(tiers)
        chosen = [t for t in chosen if t.tier in wanted]
    pairs = {}
    for t in suite:
        if t.twin:
            pairs[t.id] = pairs[t.twin] = "~".join(sorted((t.id, t.twin)))
    out: list[EpisodeSpec] = []
    for task in chosen:
        pair = {"pair": pairs[task.id]} if task.id in pairs else {}
        for phrasing in phrasings:
            for mode in error_modes:
                out.append(
                    EpisodeSpec(
                        id=f"{task.id}/{phrasing}/{mode}",
                        reset={"seed": seed, "task": task.id, "suite": version, "error_mode": mode},
                        prompt=prompt(task, phrasing),
                        max_steps=task.max_steps,
                        tags={
                            "tier": task.tier,
                            "phrasing": phrasing,
                            "error_mode": mode,
                            "suite": version,
                        },
                        data={"task": task.id, "suite": version, "phrasing": phrasing, **pair},
                    )
                )
    return out


def parse_spec_id(spec_id: str) -> tuple[str, str, str]:
    """`(task, phrasing, error_mode)` of a spec id made by `specs` (a `#k` suffix is ignored)."""
    parts = spec_id.split("#", 1)[0].split("/")
    if len(parts) != 3:
        raise ValueError(f"{spec_id!r} is not a calendar task episode id (task/phrasing/mode)")
    task, phrasing, mode = parts
    return task, phrasing, mode


def regrade(record: EpisodeRecord, version: str | None = None) -> dict[str, Any]:
    """The final metadata (`success`, `grade`, `failures`, ...) of `record`'s episode, recomputed
    by replaying its calls (see the module docstring); the suite version comes from the record's
    `suite` tag unless given."""
    version = version or record.tags.get("suite") or LATEST
    task_id, _, mode = parse_spec_id(record.spec_id)
    env = CalendarEnv()
    try:
        env.reset(seed=record.seed or 0, task=task_id, suite=str(version), error_mode=mode)
        obs = None
        for c in record.calls:
            obs = env.step(CallToolAction(tool_name=c.tool, arguments=c.arguments))
            if obs.done:
                break
        if obs is not None and obs.done:
            return dict(obs.metadata)
        found = env.task_metadata()
        assert found is not None
        return found
    finally:
        env.close()


def tasks_by_id(version: str = LATEST) -> dict[str, Task]:
    """Every task of suite `version` by id."""
    return {t.id: t for t in load_suite(version)}


def task_ids(specs_: Sequence[EpisodeSpec]) -> list[str]:
    """The distinct task ids of some specs, in order."""
    return list(dict.fromkeys(parse_spec_id(s.id)[0] for s in specs_))
