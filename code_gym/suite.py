"""Code Gym's tasks as evaluation episodes (`mcpgym eval --tasks code_gym.suite:specs`).

`specs()` makes one `EpisodeSpec` per task x error mode, id `"<task>/<error_mode>"`, reset
options `{"task", "error_mode"}`, the task's prompt and step limit, tags `kind` and
`error_mode` for the report (the structured-vs-plain ablation is a column), and `data` naming
the task for the reference agents.

Example:
    >>> [s.id for s in specs(tasks=["HumanEval/0"])]
    ['HumanEval/0/structured', 'HumanEval/0/plain']
    >>> len(specs(kinds=["repo"], error_modes=["structured"]))
    3
"""

from __future__ import annotations

from collections.abc import Iterable

from code_gym.errors import ERROR_MODES
from code_gym.tasks import all_tasks, get_task
from code_gym.taskset import prompt
from mcpgym.harness.episodes import EpisodeSpec

__all__ = ["specs"]


def specs(
    *,
    tasks: Iterable[str] | None = None,
    kinds: Iterable[str] | None = None,
    error_modes: Iterable[str] = ERROR_MODES,
    limit: int | None = None,
    seed: int = 0,
) -> list[EpisodeSpec]:
    """Episodes for the chosen tasks (default: all) x error modes (see the module docstring).

    `limit` keeps the first N tasks of each kind (a quick run: `limit=5`)."""
    chosen = [get_task(t) for t in tasks] if tasks is not None else all_tasks()
    if kinds is not None:
        wanted = set(kinds)
        chosen = [t for t in chosen if t.kind in wanted]
    if limit is not None:
        seen: dict[str, int] = {}
        kept = []
        for t in chosen:
            seen[t.kind] = seen.get(t.kind, 0) + 1
            if seen[t.kind] <= limit:
                kept.append(t)
        chosen = kept
    out: list[EpisodeSpec] = []
    for task in chosen:
        for mode in error_modes:
            out.append(
                EpisodeSpec(
                    id=f"{task.id}/{mode}",
                    reset={"seed": seed, "task": task.id, "error_mode": mode},
                    prompt=prompt(task),
                    max_steps=task.max_steps,
                    tags={"kind": task.kind, "error_mode": mode},
                    data={"task": task.id},
                )
            )
    return out


def quick() -> list[EpisodeSpec]:
    """A quick run for `mcpgym eval --tasks code_gym.suite:quick`: the first five HumanEval
    problems and every repository task, in both error modes (the ablation in a minute)."""
    return specs(limit=5)
