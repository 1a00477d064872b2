"""The standard report sections, built from `summary.json` (see `mcpgym.harness.eval.summary`).

Example:
    >>> from mcpgym.harness.eval.summary import summarize
    >>> [s.title for s in standard_sections(summarize([]), {"agent": "random"})][:2]
    ['Run', 'Results']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpgym.harness.eval.report import Bars, ReportSection, Table, Text

__all__ = ["standard_sections"]


def _pct(x: float) -> str:
    return f"{x:.1%}"


def _pm(stats: Mapping[str, float]) -> str:
    return f"{stats['mean']:.3f} ± {stats['stderr']:.3f}"


def _ms(stats: Mapping[str, float], key: str) -> str:
    return f"{stats[key] * 1000:.1f}" if key in stats else "-"


def _run(config: Mapping[str, Any]) -> ReportSection:
    rows = [[k, v] for k, v in config.items() if v not in (None, "", [], {})]
    return ReportSection("Run", [Table(["setting", "value"], rows)])


def _tool_errors(s: Mapping[str, Any]) -> str:
    """`62 of 725 calls (8.6%)`: one figure, `tool_error_calls`, wherever the report counts."""
    calls = round(s["tool_calls"].get("total", 0))
    return f"{s['tool_error_calls']} of {calls} calls ({_pct(s['tool_error_rate'])})"


def _results(s: Mapping[str, Any]) -> ReportSection:
    rows = [
        ["episodes", s["episodes"]],
        ["success rate", f"{_pct(s['success_rate'])} ({s['successes']}/{s['episodes']})"],
        ["final reward (mean ± s.e.)", _pm(s["reward"])],
        ["total reward (mean ± s.e.)", _pm(s["reward_total"])],
        ["episode errors", s["errors"]],
        ["tool calls per episode", f"{s['tool_calls']['mean']:.2f}"],
        ["tool errors", _tool_errors(s)],
        ["turns per episode", f"{s['turns']['mean']:.2f}"],
    ]
    if s.get("model_turns"):
        rows.append(["model answers", s["model_turns"]])
        rows.append(["malformed tool calls (rejected before the env)", s["malformed_tool_calls"]])
    blocks: list[Any] = [Table(["metric", "value"], rows)]
    pk = s["pass_at_k"]
    if pk["min_attempts"] > 1:
        ks = list(pk["pass@k"])
        blocks.append(
            Text(
                f"pass@k over {pk['groups']} tasks with at least {pk['min_attempts']} attempts "
                "each: pass@k is the chance that at least one of k attempts succeeds, pass^k "
                "that all k do."
            )
        )
        blocks.append(
            Table(
                ["k", "pass@k", "pass^k"],
                [[k, _pct(pk["pass@k"][k]), _pct(pk["pass^k"][k])] for k in ks],
            )
        )
    return ReportSection("Results", blocks)


def _by_tag(s: Mapping[str, Any]) -> list[ReportSection]:
    out: list[ReportSection] = []
    by_tag: Mapping[str, Mapping[str, Any]] = s["by_tag"]
    if by_tag:
        blocks: list[Any] = []
        for key, values in by_tag.items():
            names = list(values)
            blocks.append(
                Bars(
                    names,
                    {"success": [values[v]["success_rate"] for v in names]},
                    title=f"Success by {key}",
                )
            )
            blocks.append(
                Table(
                    [key, "episodes", "success", "reward (mean ± s.e.)", "errors"],
                    [
                        [v, h["episodes"], _pct(h["success_rate"]), _pm(h["reward"]), h["errors"]]
                        for v, h in values.items()
                    ],
                )
            )
        out.append(ReportSection("Success by tag", blocks))
    combos: list[Mapping[str, Any]] = s["by_tags"]
    if combos and len(by_tag) > 1:
        keys = list(combos[0]["tags"])
        labels = [" · ".join(c["tags"][k] for k in keys) for c in combos]
        out.append(
            ReportSection(
                "Success by " + " x ".join(keys),
                [
                    Bars(labels, {"success": [c["success_rate"] for c in combos]}),
                    Table(
                        [*keys, "episodes", "success", "reward (mean ± s.e.)"],
                        [
                            [
                                *(c["tags"][k] for k in keys),
                                c["episodes"],
                                _pct(c["success_rate"]),
                                _pm(c["reward"]),
                            ]
                            for c in combos
                        ],
                    ),
                ],
            )
        )
    return out


def _outcomes(s: Mapping[str, Any]) -> ReportSection:
    n = max(1, s["episodes"])
    reasons: Mapping[str, int] = s["done_reasons"]
    blocks: list[Any] = [
        Bars(list(reasons), {"episodes": [c / n for c in reasons.values()]}, title="Done reasons"),
    ]
    errors: Mapping[str, int] = s["tool_errors"]
    if errors:
        blocks.append(
            Bars(
                list(errors),
                {"calls": [float(c) for c in errors.values()]},
                title=f"Tool errors by type ({s['tool_error_calls']} failed calls)",
                max_value=None,
                fmt="{:.0f}",
            )
        )
    if s["error_messages"]:
        blocks.append(Table(["episode error", "count"], list(s["error_messages"].items())))
    return ReportSection("Outcomes", blocks)


def _latency(s: Mapping[str, Any]) -> ReportSection:
    t = s["timing"]
    rows = [
        [name, _ms(t[key], "p50"), _ms(t[key], "p90"), _ms(t[key], "p99"), _ms(t[key], "max")]
        for name, key in (
            ("episode (wall)", "episode_wall_s"),
            ("agent turn", "agent_turn_s"),
            ("environment step", "env_step_s"),
            ("reset", "reset_s"),
        )
    ]
    return ReportSection("Latency (ms)", [Table(["", "p50", "p90", "p99", "max"], rows)])


def standard_sections(summary: Mapping[str, Any], config: Mapping[str, Any]) -> list[ReportSection]:
    """Run settings, results (with pass@k), success by tag and by tag combination, outcomes and
    latency — in that order."""
    return [
        _run(config),
        _results(summary),
        *_by_tag(summary),
        _outcomes(summary),
        _latency(summary),
    ]
