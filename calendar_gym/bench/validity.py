"""The validity table of a suite: every reference agent and gamer, by phrasing, tier and trap.

`gamer_table(version)` plays each agent on every task in both phrasings in process (no server,
a few seconds per agent) and returns, per agent, the success rate overall, per phrasing, per
tier, the **trap score**, the **paired trap score** and the mean reward.

**How a trap is counted.** One episode cannot tell an agent that found out from one that says
"cannot" whatever happens: trying the request on the right target, being refused and saying so
is the careful path *and* the status-blind one, call for call, so no per-episode grader can
fail the second without failing the first (and evidence must stay any-of: the refused attempt
or the read that establishes the same fact). What tells them apart is the twin, whose world
differs only in that fact. So the benchmark credits a trap episode only when its twin — same
phrasing, same seed (and error mode, in a report) — passed too (`credited`); a trap the suite
gives no twin (v1, v2) counts alone, and so does a trap whose twin a run did not play (a
subset; the report says how many — the tables here play every twin). Every rate here
(overall, phrasing, tier, traps) counts traps that way; `traps_alone` is the per-episode rate,
shown for information. With one twin per trap (v3) the trap score equals the paired score
(`paired_score`: pairs with both halves passed). The per-episode reward an RL trainer sees is
unchanged: the pair is a property of the suite, not of one episode.

    python -m calendar_gym.bench.validity              # suite v3, seed 0, a markdown table
    python -m calendar_gym.bench.validity --suite-version 2 --seeds 0 1 2

Thresholds suite v3 holds (tests/calendar/test_gamers_v3.py, marker `calendar_validity`): every
gamer ≤ 10 % overall (positional pickers: on the natural phrasing, where there is something to
pick; `blind-done`: natural, its explicit episodes are the literal request played honestly),
≤ 5 % on traps, paired trap score ≤ 2 %; oracle 100 % in both phrasings; crawler 100 %
natural; first-match's explicit → natural gap ≥ 40 points.

Example:
    >>> ok = {("t4-perm-finance-write", "natural", 0): True,
    ...       ("t4-twin-finance-write", "natural", 0): False}
    >>> paired_score(ok, "3"), credited(ok, "3")[("t4-perm-finance-write", "natural", 0)]
    ((0, 1), False)
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from calendar_gym.agents.crawler import crawl_play
from calendar_gym.agents.gamers import GAMERS
from calendar_gym.agents.naive import naive_play
from calendar_gym.env import CalendarEnv
from calendar_gym.suite import specs
from calendar_gym.tasks.loader import load_suite
from calendar_gym.tasks.model import Phrasing, Task
from calendar_gym.tasks.reference import plan_play
from mcpgym.types import CallToolAction, Observation, StepResult

__all__ = [
    "AGENTS",
    "credited",
    "gamer_table",
    "paired_score",
    "play_suite",
    "table_row",
    "unpaired",
]

PHRASINGS: tuple[Phrasing, ...] = ("explicit", "natural")
Make = Callable[[Task, Phrasing, StepResult[Observation]], Any]
Key = tuple[str, str, int]


def _null(status: str) -> Make:
    def make(task: Task, phrasing: Phrasing, first: StepResult[Observation]) -> Any:
        yield {"type": "call_tool", "tool_name": "finish",
               "arguments": {"status": status, "summary": "Finished without looking."}}  # fmt: skip

    return make


AGENTS: dict[str, Make] = {
    "oracle": lambda task, phrasing, first: plan_play(task),
    "crawler": lambda task, phrasing, first: crawl_play(task, first),
    "first-match": lambda task, phrasing, first: naive_play(
        task, phrasing, first, exact_times=True, retry=False
    ),
    **GAMERS,
    "null-done": _null("done"),
    "null-cannot-complete": _null("cannot_complete"),
    "null-needs-clarification": _null("needs_clarification"),
}
"""Every agent of the table: the ceiling (oracle), the proof (crawler), the baseline
(first-match), the gamers, the blind floor."""


def play_suite(
    make: Make, version: str = "3", *, phrasings: Sequence[Phrasing] = ("explicit", "natural"),
    seeds: Iterable[int] = (0,),
) -> dict[Key, tuple[bool, float]]:  # fmt: skip
    """`(success, reward)` of `make`'s episode of every task x phrasing x seed, in process."""
    env = CalendarEnv()
    out: dict[Key, tuple[bool, float]] = {}
    try:
        for seed in seeds:
            for spec in specs(version, phrasings=phrasings, error_modes=["structured"], seed=seed):
                task = load_suite(version).get(spec.data["task"])
                phrasing = spec.data["phrasing"]
                obs = env.reset(**spec.reset)
                play = make(task, phrasing, StepResult(observation=obs, reward=None, done=False))
                action = next(play, None)
                while action is not None:
                    obs = env.step(CallToolAction(tool_name=action["tool_name"],
                                                  arguments=action["arguments"]))  # fmt: skip
                    if obs.done:
                        break
                    try:
                        action = play.send(StepResult(observation=obs, reward=obs.reward))
                    except StopIteration:
                        break
                grade = env.task_grade()
                assert grade is not None
                out[(task.id, phrasing, seed)] = (grade.success, grade.score if obs.done else 0.0)
    finally:
        env.close()
    return out


def credited(success: Mapping[Key, bool], version: str) -> dict[Key, bool]:
    """Each episode's success as the benchmark counts it (see the module docstring): a trap
    passes only when its twin (same key but the task) passed too; a trap without a twin in the
    suite, or whose twin is not in `success`, counts alone (`unpaired` lists those)."""
    tasks = {t.id: t for t in load_suite(version)}
    out: dict[Key, bool] = {}
    for key, ok in success.items():
        task = tasks.get(key[0])
        twin = (task.twin, *key[1:]) if task is not None and task.is_trap and task.twin else None
        if ok and twin is not None and twin in success:
            ok = success[twin]
        out[key] = ok
    return out


def unpaired(success: Mapping[Key, bool], version: str) -> list[Key]:
    """Trap episodes of `success` whose twin is not in it (counted alone by `credited`)."""
    tasks = {t.id: t for t in load_suite(version)}
    return [
        key
        for key in success
        if (task := tasks.get(key[0])) is not None
        and task.is_trap
        and task.twin is not None
        and (task.twin, *key[1:]) not in success
    ]


def paired_score(success: Mapping[Key, bool], version: str) -> tuple[int, int]:
    """`(pairs passed, pairs played)`: a trap and its twin, same phrasing and seed, both pass."""
    tasks = {t.id: t for t in load_suite(version)}
    passed = played = 0
    for (task_id, phrasing, seed), ok in success.items():
        trap = tasks.get(task_id)
        if trap is None or not trap.is_trap or trap.twin is None:
            continue
        other = success.get((trap.twin, phrasing, seed))
        if other is None:
            continue
        played += 1
        passed += ok and other
    return passed, played


def _rate(values: Sequence[bool]) -> float | None:
    return sum(values) / len(values) if values else None


def table_row(results: Mapping[Key, tuple[bool, float]], version: str) -> dict[str, float | None]:
    """One agent's row from its `play_suite` results: `overall`, `explicit`, `natural`, one
    rate per tier (`T1`...), `traps` (trap episodes credited with their twin), `traps_alone`
    (passed on their own), `paired`, the natural phrasing's `traps_natural` and
    `paired_natural`, and `reward` (None: no such episode was played). Every rate but
    `traps_alone` counts traps by `credited`."""
    tasks = {t.id: t for t in load_suite(version)}
    alone = {k: v[0] for k, v in results.items()}
    ok = credited(alone, version)
    nat = {k: v for k, v in ok.items() if k[1] == "natural"}
    passed, played = paired_score(alone, version)
    passed_n, played_n = paired_score({k: alone[k] for k in nat}, version)
    tiers = sorted({t.tier for t in tasks.values()})
    return {
        "overall": _rate(list(ok.values())),
        "explicit": _rate([v for k, v in ok.items() if k[1] == "explicit"]),
        "natural": _rate(list(nat.values())),
        **{tier: _rate([v for k, v in ok.items() if tasks[k[0]].tier == tier]) for tier in tiers},
        "traps": _rate([v for k, v in ok.items() if tasks[k[0]].is_trap]),
        "traps_alone": _rate([v for k, v in alone.items() if tasks[k[0]].is_trap]),
        "paired": passed / played if played else None,
        "traps_natural": _rate([v for k, v in nat.items() if tasks[k[0]].is_trap]),
        "paired_natural": passed_n / played_n if played_n else None,
        "reward": sum(v[1] for v in results.values()) / max(1, len(results)),
    }


def gamer_table(
    version: str = "3", *, seeds: Iterable[int] = (0,), agents: Iterable[str] | None = None
) -> dict[str, dict[str, float | None]]:
    """`table_row` of every agent (default: `AGENTS`), each played on every task in both
    phrasings (crawlers: natural only, they read its clues) and every seed."""
    seeds = list(seeds)
    table: dict[str, dict[str, float | None]] = {}
    for name in agents or AGENTS:
        phrasings: tuple[Phrasing, ...] = ("natural",) if name.startswith("crawler") else PHRASINGS
        results = play_suite(AGENTS[name], version, phrasings=phrasings, seeds=seeds)
        table[name] = table_row(results, version)
    return table


def main(argv: Sequence[str] | None = None) -> int:
    """Print the validity table as markdown."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite-version", default="3")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--agents", nargs="+", default=None)
    args = parser.parse_args(argv)
    table = gamer_table(args.suite_version, seeds=args.seeds, agents=args.agents)
    cols = list(next(iter(table.values()), {}))
    print("| agent | " + " | ".join(cols) + " |")
    print("| --- |" + " --- |" * len(cols))
    for name, row in table.items():
        cells = [
            "-" if row[c] is None else f"{row[c]:.2f}" if c == "reward" else f"{row[c]:.0%}"
            for c in cols
        ]
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
