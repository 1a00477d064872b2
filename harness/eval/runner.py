"""The evaluation runner: play many episodes at bounded concurrency, resumably, and report.

`evaluate` (async) and `run_evaluation` (blocking) take an environment (class, factory, URL or
`EnvTarget`), an `Agent` and a list of `EpisodeSpec`s. With `out`, they write into that folder:

- `episodes.jsonl` — one record per episode, appended and flushed as each ends. A rerun with
  the same folder reads it, plays only the missing spec ids, and finally rewrites it in spec
  order (atomically), so equal seeds give equal files apart from `timing`;
- `summary.json` — `mcpgym.harness.eval.summary.summarize` of the records, plus `run` (settings) and
  `sections` (data from section hooks);
- `report.md` and `report.html` — the standard sections, then those of the section hooks.

`env` may also be a started `mcpgym.pool.EnvPool`: episodes are spread over its servers; an
episode whose server dies (`infra_error`) is played again on another one, up to `infra_retries`
times, and `summary["infrastructure"]` counts those attempts apart from the agent's failures.

Example:
    >>> from mcpgym.examples.guess import GuessEnv
    >>> from mcpgym.harness.agents import RandomAgent
    >>> from mcpgym.harness.episodes import seeded_specs
    >>> result = run_evaluation(GuessEnv, RandomAgent(seed=0), seeded_specs(4, max_steps=3))
    >>> result.summary["episodes"], result.played
    (4, 4)
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpgym.harness.episodes import DEFAULT_SUCCESS_THRESHOLD, Agent, EpisodeRecord, EpisodeSpec
from mcpgym.harness.eval.pool_target import PoolTarget
from mcpgym.harness.eval.progress import NullProgress, ProgressReporter, ProgressStats, RichProgress
from mcpgym.harness.eval.report import ReportSection, SectionHook, render_html, render_markdown
from mcpgym.harness.eval.sections import standard_sections
from mcpgym.harness.eval.store import EpisodeStore
from mcpgym.harness.eval.summary import ERROR_REASONS, summarize
from mcpgym.harness.loop import EpisodeLimits, run_episode
from mcpgym.harness.sessions import as_target
from mcpgym.pool import EnvPool

__all__ = ["EvalResult", "evaluate", "run_evaluation"]


@dataclass(frozen=True, slots=True)
class EvalResult:
    """What a run produced: records in spec order, the summary, and where the files are."""

    records: list[EpisodeRecord]
    summary: dict[str, Any]
    played: int
    """Episodes played by this call (the others were already on disk)."""
    out: Path | None = None


async def evaluate(
    env: Any,
    agent: Agent,
    specs: Sequence[EpisodeSpec],
    *,
    out: Path | str | None = None,
    concurrency: int = 8,
    turn_timeout: float | None = None,
    episode_timeout: float | None = None,
    success_threshold: float = DEFAULT_SUCCESS_THRESHOLD,
    progress: bool | ProgressReporter = False,
    sections: Sequence[SectionHook] = (),
    title: str | None = None,
    infra_retries: int = 3,
) -> EvalResult:
    """Play every spec not yet recorded in `out`, `concurrency` at a time; write and summarize.

    Args:
        env: an `Environment` class or factory (in process; one instance per episode), a server
            URL (one WebSocket session per episode), or an `EnvTarget`.
        agent: plays every episode (per-episode state lives in its `AgentEpisode`s).
        specs: the episodes; ids must be unique.
        out: the output folder (`None`: keep everything in memory).
        concurrency: how many episodes run at once.
        turn_timeout: seconds per agent turn (see `EpisodeLimits`).
        episode_timeout: seconds per episode, reset included (see `EpisodeLimits`).
        success_threshold: the final reward that counts as success when the environment does not
            set `metadata["success"]`.
        progress: `True` for a rich progress bar on stderr, or a `ProgressReporter`.
        sections: report section hooks, appended after the standard sections.
        infra_retries: how often an episode lost to a dead server (`infra_error`) is replayed.

    Raises `ValueError` for duplicate spec ids, or when `out` holds another agent's records.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    _check_unique(specs)
    if isinstance(env, EnvPool):  # a pool named by the caller comes as a PoolTarget
        env = PoolTarget(env)
    pool = env.pool if isinstance(env, PoolTarget) else None
    target = env if isinstance(env, PoolTarget) else as_target(env)
    limits = EpisodeLimits(turn_timeout, episode_timeout, success_threshold)
    folder = Path(out) if out is not None else None
    store = EpisodeStore(folder / "episodes.jsonl") if folder is not None else None
    wanted = {s.id for s in specs}
    loaded = (store.load() if store else {}).items()
    # an episode lost to infrastructure was never really played: a resumed run plays it again
    records = {k: v for k, v in loaded if k in wanted and v.done_reason != "infra_error"}
    _check_agent(records.values(), agent.name, folder)
    pending = [s for s in specs if s.id not in records]
    if records:  # never resume silently: say what the folder already holds
        print(f"resumed: {len(records)} done, {len(pending)} to run ({folder})", file=sys.stderr)
    reporter = _reporter(progress, agent.name)
    tally = _Tally(done=len(records), total=len(specs))
    for r in records.values():
        tally.add(r, played=False)

    queue: asyncio.Queue[EpisodeSpec] = asyncio.Queue()
    for spec in pending:
        queue.put_nowait(spec)

    infra = _Infra()

    async def worker() -> None:
        while not queue.empty():
            spec = queue.get_nowait()
            record = await run_episode(spec, agent, target, limits)
            if record.done_reason == "infra_error" and infra.retry(spec.id, infra_retries):
                queue.put_nowait(spec)  # the pool places it on another, live server
                continue
            records[spec.id] = record
            if store is not None:
                store.append(record)
            reporter.advance(tally.add(record, played=True))

    reporter.start(len(specs), len(records))
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(min(concurrency, len(pending))):
                group.create_task(worker())
    finally:
        reporter.stop()
        if store is not None:
            store.close()
    ordered = [records[s.id] for s in specs]
    run = {
        "agent": agent.name,
        "environment": target.describe(),
        "pool": pool.describe().removeprefix("pool ") if pool is not None else None,
        "episodes": len(specs),
        "concurrency": concurrency,
        "turn_timeout_s": turn_timeout,
        "episode_timeout_s": episode_timeout,
        "success_threshold": success_threshold,
    }
    summary = summarize(ordered)
    summary["infrastructure"] = infra.summary(summary["infra_errors"], pool)
    extra = [s for s in (hook(ordered, summary) for hook in sections) if s is not None]
    summary["run"] = run
    summary["sections"] = {s.title: dict(s.data) for s in extra if s.data is not None}
    if store is not None and folder is not None:
        store.finalize(ordered)
        _write_outputs(folder, summary, title or f"{agent.name} on {run['environment']}", extra)
    return EvalResult(ordered, summary, tally.played, folder)


def run_evaluation(
    env: Any, agent: Agent, specs: Sequence[EpisodeSpec], **options: Any
) -> EvalResult:
    """`evaluate` for synchronous callers (runs its own event loop)."""
    return asyncio.run(evaluate(env, agent, specs, **options))


def _write_outputs(
    folder: Path, summary: Mapping[str, Any], title: str, extra: Sequence[ReportSection]
) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    sections = [*standard_sections(summary, summary["run"]), *extra]
    _atomic_write(folder / "summary.json", json.dumps(summary, indent=2) + "\n")
    _atomic_write(folder / "report.md", render_markdown(title, sections))
    _atomic_write(folder / "report.html", render_html(title, sections))


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


@dataclass
class _Infra:
    """Attempts lost to dead servers, kept apart from the agent's results."""

    errors: int = 0
    retried: int = 0
    attempts: Counter[str] | None = None

    def retry(self, spec_id: str, limit: int) -> bool:
        """Count one lost attempt; whether the episode may be played again."""
        self.errors += 1
        attempts = self.attempts = self.attempts or Counter()
        attempts[spec_id] += 1
        if attempts[spec_id] > limit:
            return False
        self.retried += 1
        return True

    def summary(self, unrecovered: int, pool: EnvPool | None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "errors": self.errors,
            "retried": self.retried,
            "unrecovered": unrecovered,
        }
        if pool is not None:
            out["pool"] = pool.stats()
        return out


@dataclass
class _Tally:
    done: int
    total: int
    errors: int = 0
    successes: int = 0
    reward_sum: float = 0.0
    played: int = 0

    def add(self, record: EpisodeRecord, *, played: bool) -> ProgressStats:
        if played:
            self.done += 1
            self.played += 1
        self.errors += record.done_reason in ERROR_REASONS
        self.successes += record.success
        self.reward_sum += record.reward_final
        return ProgressStats(
            self.done, self.total, self.errors, self.successes, self.reward_sum, self.played
        )


def _reporter(progress: bool | ProgressReporter, name: str) -> ProgressReporter:
    if progress is True:
        return RichProgress(f"eval {name}")
    if progress is False:
        return NullProgress()
    return progress


def _check_unique(specs: Sequence[EpisodeSpec]) -> None:
    counts = Counter(s.id for s in specs)
    dupes = sorted(k for k, n in counts.items() if n > 1)
    if dupes:
        raise ValueError(f"spec ids must be unique; repeated: {', '.join(dupes[:10])}")


def _check_agent(records: Any, name: str, folder: Path | None) -> None:
    others = sorted({r.agent for r in records} - {name})
    if others:
        raise ValueError(
            f"{folder} holds episodes of agent {others[0]!r}, not {name!r}; "
            "use another output folder"
        )
