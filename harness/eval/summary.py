"""`summary.json`: what a run's episode records add up to.

Definitions:

- **success rate** — successful episodes / episodes (`EpisodeRecord.success`).
- **reward** — the final step's reward, mean ± standard error (sample std / √n); `reward_total`
  is the same for the sum over the episode.
- **pass@k** — episodes sharing an `EpisodeSpec.group` (by default the id before `#`; see
  `repeat`) are attempts at one task. With n attempts of which c succeed, pass@k is the chance
  that at least one of k attempts drawn without replacement succeeds, `1 - C(n-c, k) / C(n, k)`
  (the unbiased estimator of Chen et al., 2021), averaged over groups; **pass^k** is the chance
  that all k succeed, `C(c, k) / C(n, k)` (τ-bench's reliability measure). Reported for
  k = 1, 2, 4, … up to the smallest number of attempts any group has.
- **errors** — episodes that ended in `error`, `turn_timeout` or `episode_timeout`; tool errors
  are counted separately by `error_type` (a failed tool call is data, not an episode error).
- **tool_error_calls** — the tool calls that failed (an `error_type` in the episode's calls),
  computed once here: the sum of `tool_errors`, the numerator of `tool_error_rate`, and the
  figure every report section quotes (a section's own finer count, such as Calendar's labelled
  calls, says how it relates to this one).
- **model_turns** / **malformed_tool_calls** — for model-backed agents, how many answers the
  model gave and how many of its tool calls were rejected before reaching the environment
  (arguments not a JSON object, unknown function); a rejected call is not a tool error.
- **infra_errors** — episodes whose last attempt ended in `infra_error` (a pool server died and
  the retries ran out): infrastructure, never counted among `errors`. The runner adds the retried
  attempts and the pool's counters under `infrastructure`.
- **timing** — percentiles (p50/p90/p99, linear interpolation) of episode wall time, agent turn
  and environment step latencies; the only clock-dependent part of the summary.
- **by_tag** / **by_tags** — the headline numbers per value of each tag, and per combination
  of all tags (e.g. tier x phrasing x error_mode).

Example:
    >>> from mcpgym.harness.episodes import EpisodeRecord
    >>> recs = [EpisodeRecord(spec_id=f"t#{i}", group="t", agent="a", done_reason="done",
    ...                       success=i == 0, reward_final=float(i == 0)) for i in range(2)]
    >>> s = summarize(recs)
    >>> s["success_rate"], s["pass_at_k"]["pass@k"], s["pass_at_k"]["pass^k"]
    (0.5, {'1': 0.5, '2': 1.0}, {'1': 0.5, '2': 0.0})
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from mcpgym.harness.episodes import EpisodeRecord

__all__ = ["ERROR_REASONS", "mean_stderr", "pass_at_k", "percentiles", "summarize"]

ERROR_REASONS = ("error", "turn_timeout", "episode_timeout")
"""Done reasons that count as an episode error."""


def mean_stderr(values: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error of the mean (0 for fewer than two values).

    Example:
        >>> mean_stderr([1.0, 0.0, 1.0, 0.0])  # doctest: +ELLIPSIS
        (0.5, 0.288...)
    """
    n = len(values)
    if n == 0:
        return 0.0, 0.0
    mean = math.fsum(values) / n
    if n < 2:
        return mean, 0.0
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(var / n)


def percentiles(values: Iterable[float], qs: Sequence[int] = (50, 90, 99)) -> dict[str, float]:
    """`{"p50": …, "p90": …, "p99": …, "max": …}` by linear interpolation (empty: `{}`).

    Example:
        >>> percentiles([1.0, 2.0, 3.0, 4.0], qs=(50,))
        {'p50': 2.5, 'max': 4.0}
    """
    data = sorted(values)
    if not data:
        return {}
    out: dict[str, float] = {}
    for q in qs:
        pos = (len(data) - 1) * q / 100
        lo, hi = math.floor(pos), math.ceil(pos)
        out[f"p{q}"] = data[lo] + (data[hi] - data[lo]) * (pos - lo)
    out["max"] = data[-1]
    return out


def pass_at_k(outcomes: Sequence[Sequence[bool]]) -> dict[str, Any]:
    """pass@k and pass^k over groups of attempts (see the module docstring)."""
    groups = [g for g in outcomes if g]
    if not groups:
        return {"groups": 0, "min_attempts": 0, "pass@k": {}, "pass^k": {}}
    smallest = min(len(g) for g in groups)
    ks = [k for k in (2**i for i in range(smallest.bit_length())) if k <= smallest]
    if smallest not in ks:
        ks.append(smallest)
    at: dict[str, float] = {}
    hat: dict[str, float] = {}
    for k in ks:
        ps: list[float] = []
        hs: list[float] = []
        for g in groups:
            n, c = len(g), sum(g)
            ps.append(1.0 - math.comb(n - c, k) / math.comb(n, k))
            hs.append(math.comb(c, k) / math.comb(n, k))
        at[str(k)], hat[str(k)] = math.fsum(ps) / len(ps), math.fsum(hs) / len(hs)
    return {"groups": len(groups), "min_attempts": smallest, "pass@k": at, "pass^k": hat}


def _headline(records: Sequence[EpisodeRecord]) -> dict[str, Any]:
    n = len(records)
    successes = sum(r.success for r in records)
    reward, reward_se = mean_stderr([r.reward_final for r in records])
    total, total_se = mean_stderr([r.reward_total for r in records])
    return {
        "episodes": n,
        "successes": successes,
        "success_rate": successes / n if n else 0.0,
        "reward": {"mean": reward, "stderr": reward_se},
        "reward_total": {"mean": total, "stderr": total_se},
        "errors": sum(r.done_reason in ERROR_REASONS for r in records),
    }


def _counts(records: Sequence[EpisodeRecord], attr: str) -> dict[str, float]:
    values = [float(getattr(r, attr)) for r in records]
    mean, _ = mean_stderr(values)
    return {"mean": mean, "total": math.fsum(values), **percentiles(values, (50,))}


def summarize(records: Sequence[EpisodeRecord]) -> dict[str, Any]:
    """The run's summary (JSON-able); see the module docstring for every figure."""
    tool_errors: Counter[str] = Counter()
    for r in records:
        tool_errors.update(r.tool_errors)
    calls = sum(r.tool_calls for r in records)
    failed = sum(tool_errors.values())
    groups: dict[str, list[bool]] = defaultdict(list)
    for r in records:
        groups[r.group].append(r.success)
    return {
        **_headline(records),
        "agents": sorted({r.agent for r in records}),
        "pass_at_k": pass_at_k(list(groups.values())),
        "done_reasons": dict(sorted(Counter(r.done_reason for r in records).items())),
        "infra_errors": sum(r.done_reason == "infra_error" for r in records),
        "error_messages": dict(
            Counter(
                r.error or r.done_reason for r in records if r.done_reason in ERROR_REASONS
            ).most_common(10)
        ),
        "tool_calls": _counts(records, "tool_calls"),
        "tool_errors": dict(sorted(tool_errors.items())),
        "tool_error_calls": failed,
        "tool_error_rate": failed / calls if calls else 0.0,
        "turns": _counts(records, "turns"),
        "model_turns": sum(len(r.model_turns) for r in records),
        "malformed_tool_calls": sum(r.malformed_calls for r in records),
        "steps": _counts(records, "steps"),
        "by_tag": _by_tag(records),
        "by_tags": _by_tags(records),
        "timing": _timing(records),
    }


def _by_tag(records: Sequence[EpisodeRecord]) -> dict[str, dict[str, Any]]:
    keys = sorted({k for r in records for k in r.tags})
    out: dict[str, dict[str, Any]] = {}
    for key in keys:
        by_value: dict[str, list[EpisodeRecord]] = defaultdict(list)
        for r in records:
            by_value[r.tags.get(key, "-")].append(r)
        out[key] = {v: _headline(rs) for v, rs in sorted(by_value.items())}
    return out


def _by_tags(records: Sequence[EpisodeRecord]) -> list[dict[str, Any]]:
    keys = sorted({k for r in records for k in r.tags})
    if not keys:
        return []
    combos: dict[tuple[str, ...], list[EpisodeRecord]] = defaultdict(list)
    for r in records:
        combos[tuple(r.tags.get(k, "-") for k in keys)].append(r)
    return [
        {"tags": dict(zip(keys, combo, strict=True)), **_headline(rs)}
        for combo, rs in sorted(combos.items())
    ]


def _timing(records: Sequence[EpisodeRecord]) -> dict[str, Any]:
    wall = [r.timing.wall_s for r in records]
    return {
        "episode_wall_s": percentiles(wall),
        "agent_turn_s": percentiles(t for r in records for t in r.timing.agent_s),
        "env_step_s": percentiles(t for r in records for t in r.timing.env_s),
        "reset_s": percentiles(r.timing.reset_s for r in records),
    }
