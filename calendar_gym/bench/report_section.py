"""The Calendar benchmark's part of an evaluation report: success by tier x phrasing x error
mode, and the failure distribution beside the published split.

`section` is a report section hook for the runner (`mcpgym eval ... --section
calendar_gym.bench.report_section:section`, or `evaluate(..., sections=[section])`). It reads each
episode's grade and failure labels from the final observation's metadata, and regrades by replay
(`calendar_gym.suite.regrade`) the episodes that ended without one (an agent that stopped without
calling `finish`). `success_matrix` and `failure_split` are the same numbers as plain data (the
demo prints them).

Example:
    >>> from mcpgym.harness.episodes import EpisodeRecord
    >>> rec = EpisodeRecord(spec_id="t1-create-haircut/natural/plain", group="g", agent="a",
    ...     done_reason="done", tags={"tier": "T1", "phrasing": "natural", "error_mode": "plain"},
    ...     final_metadata={"success": False, "grade": {"score": 0.0},
    ...                     "failures": [{"label": "wrong_args"}]})
    >>> failure_split([rec])["counts"]
    {'wrong_tool': 0, 'wrong_args': 1, 'wrong_order': 0, 'other': 0}
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from calendar_gym.bench.validity import credited, paired_score, unpaired
from calendar_gym.suite import ERROR_MODES, PHRASINGS, parse_spec_id, regrade
from calendar_gym.tasks.classify import EXTRA_LABELS, LABELS, PUBLISHED_SOURCE, PUBLISHED_SPLIT
from calendar_gym.tasks.loader import LATEST
from mcpgym.harness.episodes import EpisodeRecord
from mcpgym.harness.eval.report import Bars, ReportSection, Table, Text

__all__ = [
    "COLUMNS",
    "failure_split",
    "graded",
    "lone_traps",
    "paired_traps",
    "section",
    "success_matrix",
]

COLUMNS: list[tuple[str, str]] = [(p, m) for p in PHRASINGS for m in ERROR_MODES]
"""The (phrasing, error mode) columns of the success table."""


def _is_task_episode(record: EpisodeRecord) -> bool:
    try:
        parse_spec_id(record.spec_id)
    except ValueError:
        return False
    return {"tier", "phrasing", "error_mode"} <= set(record.tags)


def graded(record: EpisodeRecord) -> Mapping[str, Any]:
    """The episode's grading metadata: from its final observation, else by replay."""
    if "grade" in record.final_metadata:
        return record.final_metadata
    return regrade(record)


def _pct(values: Sequence[bool]) -> str:
    return f"{sum(values) / len(values):.0%}" if values else "-"


def _credited(records: Sequence[EpisodeRecord]) -> dict[int, bool]:
    """Each task episode's success (by index) as the benchmark counts it: a trap only with its
    twin of the same phrasing, error mode and seed (`calendar_gym.bench.validity.credited`)."""
    keys: dict[int, tuple[str, tuple[str, str, int]]] = {}
    by_suite: dict[str, dict[tuple[str, str, int], bool]] = defaultdict(dict)
    for i, r in enumerate(records):
        if not _is_task_episode(r):
            continue
        task, phrasing, mode = parse_spec_id(r.spec_id)
        version = str(r.tags.get("suite", LATEST))
        key = (task, f"{phrasing}/{mode}", r.seed or 0)
        keys[i] = (version, key)
        by_suite[version][key] = bool(graded(r).get("success")) and r.success
    credit = {v: credited(results, v) for v, results in by_suite.items()}
    return {i: credit[v][key] for i, (v, key) in keys.items()}


def lone_traps(records: Sequence[EpisodeRecord]) -> int:
    """Trap episodes of the run whose twin it did not play (counted alone)."""
    by_suite: dict[str, dict[tuple[str, str, int], bool]] = defaultdict(dict)
    for r in records:
        if _is_task_episode(r):
            task, phrasing, mode = parse_spec_id(r.spec_id)
            key = (task, f"{phrasing}/{mode}", r.seed or 0)
            by_suite[str(r.tags.get("suite", LATEST))][key] = True
    return sum(len(unpaired(results, v)) for v, results in by_suite.items())


def success_matrix(records: Sequence[EpisodeRecord]) -> dict[str, Any]:
    """Success rates: `cells[tier][phrasing/mode]`, `tiers[tier]`, `columns[phrasing/mode]`,
    `overall`, plus the mean partial credit per tier (`credit`). A trap episode counts as a
    success only when its twin (same phrasing, error mode and seed) in the run succeeded too:
    one episode cannot tell a finding from a status-blind answer (docs/calendar_benchmark.md);
    a trap whose twin the run did not play counts alone (`lone_traps`)."""
    cells: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    credit: dict[str, list[float]] = defaultdict(list)
    passed = _credited(records)
    for i, r in enumerate(records):
        if i not in passed:
            continue
        meta = graded(r)
        column = f"{r.tags['phrasing']}/{r.tags['error_mode']}"
        cells[r.tags["tier"]][column].append(passed[i])
        credit[r.tags["tier"]].append(float((meta.get("grade") or {}).get("score", 0.0)))

    def rate(values: list[bool]) -> float | None:
        return sum(values) / len(values) if values else None

    tiers = sorted(cells)
    cols = [f"{p}/{m}" for p, m in COLUMNS]
    extra = sorted({c for t in tiers for c in cells[t]} - set(cols))
    cols += extra
    return {
        "columns": cols,
        "cells": {t: {c: rate(cells[t][c]) for c in cols} for t in tiers},
        "tiers": {t: rate([v for c in cols for v in cells[t][c]]) for t in tiers},
        "by_column": {c: rate([v for t in tiers for v in cells[t][c]]) for c in cols},
        "overall": rate([v for t in tiers for c in cols for v in cells[t][c]]),
        "credit": {t: sum(v) / len(v) for t, v in sorted(credit.items()) if v},
        "episodes": sum(len(cells[t][c]) for t in tiers for c in cols),
        "lone_traps": lone_traps(records),
    }


def failure_split(records: Sequence[EpisodeRecord]) -> dict[str, Any]:
    """Failure labels over every task episode: `counts`, `shares` (of all labelled calls),
    `episodes` with at least one label, error->recovery totals, and beside them the same
    episodes' `calls` and `tool_errors` (a label is not a tool error: see the section's text)."""
    counts: Counter[str] = Counter()
    recovered = unrecovered = failing = tool_errors = calls = 0
    for r in records:
        if not _is_task_episode(r):
            continue
        calls += len(r.calls)
        tool_errors += sum(c.error_type is not None for c in r.calls)
        meta = graded(r)
        labels = [f.get("label") for f in meta.get("failures") or []]
        counts.update(label for label in labels if label in LABELS or label in EXTRA_LABELS)
        failing += bool(labels)
        stats = (meta.get("grade") or {}).get("stats") or {}
        recovered += int(stats.get("recovered", 0))
        unrecovered += int(stats.get("unrecovered", 0))
    # Like for like: shares are over the published taxonomy's labels only; a wrong finish status
    # and a write in a trap are outcome failures, counted beside it (`extra`).
    total = sum(counts.get(label, 0) for label in LABELS)
    return {
        "counts": {label: counts.get(label, 0) for label in LABELS},
        "extra": {label: counts.get(label, 0) for label in EXTRA_LABELS},
        "shares": {label: (counts.get(label, 0) / total if total else 0.0) for label in LABELS},
        "total": total,
        "calls": calls,
        "tool_errors": tool_errors,
        "episodes_with_failures": failing,
        "errors_recovered": recovered,
        "errors_unrecovered": unrecovered,
    }


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def paired_traps(records: Sequence[EpisodeRecord]) -> dict[str, int]:
    """`passed`/`played` trap-twin pairs: both halves of a pair (same phrasing, error mode and
    seed) must succeed (`calendar_gym.bench.validity.paired_score` over the run's episodes)."""
    by_suite: dict[str, dict[tuple[str, str, int], bool]] = defaultdict(dict)
    for record in records:
        if not _is_task_episode(record):
            continue
        task, phrasing, mode = parse_spec_id(record.spec_id)
        ok = bool(graded(record).get("success"))
        by_suite[str(record.tags.get("suite", LATEST))][(task, f"{phrasing}/{mode}",
                                                          record.seed or 0)] = ok  # fmt: skip
    passed = played = 0
    for version, results in by_suite.items():
        p, n = paired_score(results, version)
        passed, played = passed + p, played + n
    return {"passed": passed, "played": played}


def section(
    records: Sequence[EpisodeRecord], summary: Mapping[str, Any] | None = None
) -> ReportSection | None:
    """The Calendar benchmark section (None when the run holds no calendar task episodes)."""
    matrix = success_matrix(records)
    if not matrix["episodes"]:
        return None
    split = failure_split(records)
    pairs = paired_traps(records)
    cols = matrix["columns"]
    rows = [
        [t, *(_fmt(matrix["cells"][t][c]) for c in cols), _fmt(matrix["tiers"][t]),
         f"{matrix['credit'].get(t, 0.0):.2f}"]
        for t in matrix["cells"]
    ]  # fmt: skip
    rows.append(["all", *(_fmt(matrix["by_column"][c]) for c in cols), _fmt(matrix["overall"]), ""])
    published = [PUBLISHED_SPLIT[label] for label in LABELS]
    blocks = [
        Text(
            "Success by tier and by phrasing/error mode (a trap counts only when its twin, the "
            "same request where it can be done, succeeded too). The published evaluation "
            "reports, for "
            "LLM agents on its own calendar tasks (not this suite), about 90% success with "
            "explicit ids and about 40% with natural language (source: "
            f"{PUBLISHED_SOURCE}). Like for like, compare the gap between the explicit and "
            "natural columns, not the levels."
        ),
        Table(["tier", *cols, "all", "partial credit"], rows),
        Bars(
            cols,
            {"success": [matrix["by_column"][c] or 0.0 for c in cols]},
            title="Success by phrasing/error mode",
        ),
        Bars(
            list(LABELS),
            {"this run": [split["shares"][label] for label in LABELS], "published": published},
            title=f"Failure distribution ({split['total']} labelled calls)",
        ),
        Table(
            ["label", "calls", "share", "published"],
            [
                [
                    label,
                    split["counts"][label],
                    f"{split['shares'][label]:.0%}",
                    f"{PUBLISHED_SPLIT[label]:.0%}",
                ]
                for label in LABELS
            ],
        ),
        Text(
            f"A labelled call is one the grader counts as a failure of the task: every tool "
            f"error except those a trap expects (a denied write), and successful calls that did "
            f"harm or advanced nothing. So the {split['total']} labelled calls are not the "
            f"report's tool-error figure: these task episodes made {split['calls']} calls, "
            f"{split['tool_errors']} of them tool errors."
        ),
        Text(
            "Labels follow the published taxonomy, where other means timeouts and auth "
            "failures. Outcome failures that are not failed tool calls are counted beside it: "
            f"wrong finish status {split['extra']['wrong_finish']}, writes in a trap task "
            f"{split['extra']['trap_write']}."
        ),
        Text(
            f"Paired trap score: {pairs['passed']} of {pairs['played']} trap/twin pairs passed "
            "both halves (a trap and its solvable twin, same phrasing, error mode and seed; a "
            "status-blind agent passes half of every pair and none of them)."
            + (
                f" {matrix['lone_traps']} trap episodes were played without their twin and "
                "are counted alone above."
                if matrix["lone_traps"]
                else ""
            )
        ),
        Text(
            f"{split['episodes_with_failures']} episodes had labelled calls. Failed calls "
            f"followed by a success of the same tool (error→recovery): "
            f"{split['errors_recovered']}; never recovered: {split['errors_unrecovered']} (errors "
            "a trap expects, such as a denied write, are not counted)."
        ),
    ]
    return ReportSection(
        "Calendar benchmark",
        blocks,
        data={
            "success": matrix,
            "failures": split,
            "paired_traps": pairs,
            "published_split": dict(PUBLISHED_SPLIT),
        },
    )
