"""What a run leaves behind: summary figures (pass@k, percentiles, tags), the reports with their
charts and hook sections, and the episodes file's resilience."""

from __future__ import annotations

import doctest
import importlib
import json
import math
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from eval_helpers import Bisect, Scripted

from mcpgym.examples.guess import GuessEnv
from mcpgym.harness.episodes import EpisodeRecord, EpisodeSpec, episode_success, repeat
from mcpgym.harness.eval.report import (
    Bars,
    ReportSection,
    Table,
    Text,
    render_html,
    render_markdown,
)
from mcpgym.harness.eval.runner import evaluate, run_evaluation
from mcpgym.harness.eval.sections import standard_sections
from mcpgym.harness.eval.store import CorruptEpisodes, EpisodeStore
from mcpgym.harness.eval.summary import mean_stderr, pass_at_k, percentiles, summarize
from mcpgym.harness.eval.svg import bar_chart

MODULES = [
    "agents",
    "eval.cli",
    "episodes",
    "llm.agent",
    "loop",
    "eval.progress",
    "eval.report",
    "eval.runner",
    "eval.sections",
    "sessions",
    "eval.store",
    "eval.summary",
    "eval.svg",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"mcpgym.harness.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert module.__doc__ and getattr(module, "__all__", None) is not None


# -- summary ---------------------------------------------------------------------------------------


def rec(
    i: int, success: bool, *, group: str = "g", reward: float = 0.0, **kw: Any
) -> EpisodeRecord:
    return EpisodeRecord(
        spec_id=f"{group}#{i}",
        group=group,
        agent="a",
        success=success,
        reward_final=reward,
        done_reason=kw.pop("done_reason", "done"),
        **kw,
    )


def test_pass_at_k_is_the_unbiased_estimator() -> None:
    # one task, 4 attempts, 1 success: pass@2 = 1 - C(3,2)/C(4,2) = 0.5; pass^2 = 0
    result = pass_at_k([[True, False, False, False]])
    assert result["pass@k"] == {"1": 0.25, "2": 0.5, "4": 1.0}
    assert result["pass^k"] == {"1": 0.25, "2": 0.0, "4": 0.0}
    # groups are averaged; k stops at the smallest group (3 → k = 1, 2, 3)
    mixed = pass_at_k([[True, True, True], [False, False, False, True]])
    assert list(mixed["pass@k"]) == ["1", "2", "3"]
    assert mixed["pass@k"]["1"] == pytest.approx((1.0 + 0.25) / 2)
    assert mixed["pass^k"]["3"] == pytest.approx(0.5)
    assert pass_at_k([])["groups"] == 0


def test_mean_stderr_and_percentiles() -> None:
    assert mean_stderr([]) == (0.0, 0.0) and mean_stderr([2.0]) == (2.0, 0.0)
    mean, se = mean_stderr([0.0, 1.0])
    assert mean == 0.5 and se == pytest.approx(0.5)
    p = percentiles(range(101))
    assert (p["p50"], p["p90"], p["p99"], p["max"]) == (50, 90, 99, 100)


def test_summary_counts_errors_tool_errors_and_tags() -> None:
    records = [
        rec(0, True, reward=1.0, tags={"tier": "T1", "phrasing": "explicit"}, tool_calls=2),
        rec(
            1,
            False,
            tags={"tier": "T1", "phrasing": "natural"},
            tool_calls=4,
            tool_errors={"invalid_args": 2, "timeout": 1},
        ),
        rec(
            2,
            False,
            tags={"tier": "T2", "phrasing": "natural"},
            done_reason="turn_timeout",
            error="a turn exceeded 1 s",
        ),
    ]
    s = summarize(records)
    assert (s["episodes"], s["successes"], s["errors"]) == (3, 1, 1)
    assert s["tool_errors"] == {"invalid_args": 2, "timeout": 1}
    assert s["tool_error_rate"] == 0.5 and s["tool_error_calls"] == 3
    assert s["done_reasons"] == {"done": 2, "turn_timeout": 1}
    assert s["error_messages"] == {"a turn exceeded 1 s": 1}
    assert s["by_tag"]["tier"]["T1"]["success_rate"] == 0.5
    assert s["by_tag"]["phrasing"]["natural"]["episodes"] == 2
    assert [c["tags"] for c in s["by_tags"]] == [
        {"phrasing": "explicit", "tier": "T1"},
        {"phrasing": "natural", "tier": "T1"},
        {"phrasing": "natural", "tier": "T2"},
    ]
    assert json.loads(json.dumps(s)) == s  # JSON-able as is


def test_success_rule() -> None:
    assert episode_success({"success": True}, 0.0)
    assert not episode_success({"success": False}, 1.0)
    assert episode_success({"success": "yes"}, 1.0)  # not a bool: the reward decides
    assert not episode_success({}, None)


# -- reports ---------------------------------------------------------------------------------------


def failure_split(records: Any, summary: Any) -> ReportSection:
    measured = [0.5, 0.25, 0.25, 0.0]
    return ReportSection(
        "Failure distribution",
        [
            Text("Measured beside the published split."),
            Bars(
                ["wrong_tool", "wrong_args", "wrong_order", "other"],
                {"this run": measured, "published": [0.23, 0.51, 0.18, 0.08]},
            ),
        ],
        data={"measured": measured},
    )


def test_report_files_have_the_expected_sections(tmp_path: Path) -> None:
    specs = repeat(
        [
            EpisodeSpec(
                id=f"t{i}",
                reset={"seed": i},
                max_steps=3 + 4 * (i % 2),
                tags={"tier": f"T{1 + i % 2}", "phrasing": ("explicit", "natural")[i % 3 > 0]},
            )
            for i in range(8)
        ],
        2,
    )
    hooks = [failure_split, lambda records, summary: None]
    run_evaluation(
        GuessEnv, Bisect(), specs, out=tmp_path, sections=hooks, title="Guess <benchmark>"
    )
    files = {p.name: p for p in tmp_path.iterdir()}
    assert set(files) == {"episodes.jsonl", "summary.json", "report.md", "report.html"}
    assert all(p.stat().st_size > 0 for p in files.values())

    md = files["report.md"].read_text()
    for heading in (
        "# Guess <benchmark>",
        "## Run",
        "## Results",
        "## Success by tag",
        "## Success by phrasing x tier",
        "## Outcomes",
        "## Latency (ms)",
        "## Failure distribution",
    ):
        assert heading in md, heading
    assert "| k | pass@k | pass^k |" in md
    assert "| wrong_args | 25% |" in md and "51%" in md
    assert md.index("## Latency (ms)") < md.index("## Failure distribution")

    html = files["report.html"].read_text()
    assert html.startswith("<!DOCTYPE html>") and "<script" not in html
    assert "<title>Guess &lt;benchmark&gt;</title>" in html
    assert html.count("<svg") >= 5  # tier, phrasing, combinations, done reasons, failures
    assert "Success by tier" in html and "published" in html

    summary = json.loads(files["summary.json"].read_text())
    assert summary["sections"] == {"Failure distribution": {"measured": [0.5, 0.25, 0.25, 0.0]}}
    assert summary["run"]["agent"] == "bisect" and summary["pass_at_k"]["min_attempts"] == 2
    assert set(summary["by_tag"]) == {"phrasing", "tier"}


def test_svg_chart_escapes_and_checks_its_input() -> None:
    svg = bar_chart(["<b>"], {"a&b": [0.5]}, title="t")
    assert ElementTree.fromstring(svg).tag == "{http://www.w3.org/2000/svg}svg"  # well-formed
    assert "&lt;b&gt;" in svg and "a&amp;b" in svg and "<b>" not in svg
    with pytest.raises(ValueError, match="has 1 values for 2 categories"):
        bar_chart(["x", "y"], {"s": [1.0]})
    html = render_html("r", [ReportSection("s", [Table(["a"], [[1], ["x|y"]])])])
    assert '<td class="num">1</td>' in html


# -- episodes.jsonl --------------------------------------------------------------------------------


def test_store_drops_only_a_partial_last_line(tmp_path: Path) -> None:
    path = tmp_path / "episodes.jsonl"
    good = [rec(i, True).model_dump_json() for i in range(3)]
    path.write_text("\n".join(good) + "\n" + good[0][:25])
    assert list(EpisodeStore(path).load()) == ["g#0", "g#1", "g#2"]
    assert path.read_text() == "\n".join(good) + "\n"  # the next append starts a fresh line
    path.write_text(good[0] + "\n{broken}\n" + good[1] + "\n")
    with pytest.raises(CorruptEpisodes, match=":2:"):
        EpisodeStore(path).load()


def test_store_keeps_the_first_of_duplicate_ids(tmp_path: Path) -> None:
    path = tmp_path / "episodes.jsonl"
    first, second = rec(0, True), rec(0, False)
    path.write_text(first.model_dump_json() + "\n" + second.model_dump_json() + "\n")
    assert EpisodeStore(path).load()["g#0"].success


async def test_errors_show_in_the_summary(tmp_path: Path) -> None:
    def boom(turn: int, result: Any) -> Any:
        raise RuntimeError("agent bug")

    result = await evaluate(GuessEnv, Scripted(boom), [EpisodeSpec(id="x")], out=tmp_path)
    assert result.summary["errors"] == 1
    assert result.summary["error_messages"] == {"RuntimeError: agent bug": 1}
    assert "RuntimeError: agent bug" in (tmp_path / "report.md").read_text()
    assert math.isclose(result.summary["success_rate"], 0.0)


def test_the_docs_examples_run() -> None:
    root = Path(__file__).resolve().parents[2]
    text = (root / "docs" / "evaluation.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 2
    for i, block in enumerate(blocks):
        exec(compile(block, f"docs/evaluation.md[{i}]", "exec"), {"__name__": "docs_evaluation"})


def test_the_report_counts_failed_tool_calls_with_one_figure() -> None:
    """Issue 29: the report's tool-error count and its other counts disagreed. `tool_error_calls`
    is computed once (in `summarize`) and every place of the report that counts failed tool
    calls prints that figure."""
    records = [
        rec(0, True, tool_calls=5, tool_errors={"invalid_args": 2}),
        rec(1, False, tool_calls=3, tool_errors={"execution_error": 1, "invalid_args": 1}),
    ]
    s = summarize(records)
    assert s["tool_error_calls"] == 4 == sum(s["tool_errors"].values())
    md = render_markdown("t", standard_sections(s, {"agent": "a"}))
    assert "| tool errors | 4 of 8 calls (50.0%) |" in md
    assert "**Tool errors by type (4 failed calls)**" in md
