"""The main job, `python -m calendar_gym.bench.demo`: a small subset in process, the real command
against a real `mcpgym serve` subprocess, and its exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from calendar_gym.bench import demo


def _summary(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "summary.json").read_text(encoding="utf-8"))


def test_demo_in_process_prints_tables_and_writes_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = demo.main(["--in-process", "--limit", "1", "--out", str(tmp_path), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    for name in ("oracle", "naive", "first-match", "random"):
        assert f"{name}: success by tier" in out, name
    for name in ("null-done", "null-cannot-complete", "null-needs-clarification", "first-match"):
        assert f"│ {name} " in out, name  # a row of the headline
    assert "Failed calls by label" in out and "published" in out and "OK" in out
    assert "wrong_finish" in out and "trap_write" in out
    for name in ("report.md", "report.html", "oracle/episodes.jsonl", "naive/report.html"):
        assert (tmp_path / name).is_file(), name
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## Failure distribution, all agents" in report
    assert "## Summary" in report and "| errors | s |" in report
    assert "huggingface.co/blog/openenv-turing" in report
    oracle = _summary(tmp_path / "oracle")
    assert oracle["episodes"] == 16 and oracle["success_rate"] == 1.0
    section = oracle["sections"]["Calendar benchmark"]
    assert section["success"]["overall"] == 1.0
    assert set(section["published_split"]) == {"wrong_tool", "wrong_args", "wrong_order", "other"}
    # issue 29: the section's labelled calls and the report's tool errors are two figures, and
    # the section says which is which, with the tool errors the report counts
    for agent in ("naive", "random"):
        summary = _summary(tmp_path / agent)
        split = summary["sections"]["Calendar benchmark"]["failures"]
        assert split["tool_errors"] == summary["tool_error_calls"], agent
        assert split["calls"] == summary["tool_calls"]["total"], agent
        html = (tmp_path / agent / "report.md").read_text(encoding="utf-8")
        assert f"{split['total']} labelled calls are not the report's tool-error figure" in html
        assert f"{split['tool_errors']} of them tool errors" in html


class _Idle:
    """Stands in for the oracle and does nothing: the demo must notice."""

    name = "oracle"

    def start(self, spec: Any, tools: Any) -> _Idle:
        return self

    async def act(self, result: Any) -> None:
        return None

    async def aclose(self) -> None:
        return None


def test_demo_fails_when_the_oracle_does_not_solve_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(demo, "reference_agents", lambda: [_Idle()])
    args = ["--in-process", "--tiers", "T1", "--limit", "1", "--out", str(tmp_path), "--quiet"]
    assert demo.main(args) == 1
    assert "FAIL" in capsys.readouterr().out


def test_demo_rejects_bad_arguments(tmp_path: Path) -> None:
    assert demo.main(["--concurrency", "0", "--out", str(tmp_path)]) == 2


@pytest.mark.server
def test_serve_starts_a_real_server_and_stops_it() -> None:
    with demo.serve() as url:
        assert url.startswith("http://127.0.0.1:")
        assert httpx.get(f"{url}/health", timeout=5).json()["status"] == "healthy"
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{url}/health", timeout=2)


@pytest.mark.server
def test_the_main_job_command_against_a_served_environment(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "calendar_gym.bench.demo", "--limit", "1", "--out", str(tmp_path),
         "--quiet"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "environment: http://127.0.0.1:" in done.stdout
    naive = _summary(tmp_path / "naive")
    assert naive["episodes"] == 16 and naive["errors"] == 0
    assert naive["run"]["environment"].startswith("http://127.0.0.1:")
    assert (tmp_path / "report.html").read_text(encoding="utf-8").count("<svg") >= 3


def test_the_report_renders_code_and_links_keeps_colours_and_names_no_port(tmp_path: Path) -> None:
    assert demo.main(["--in-process", "--limit", "1", "--out", str(tmp_path), "--quiet"]) == 0
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    paragraphs = re.findall(r"<p>(.*?)</p>", html, flags=re.S)
    assert paragraphs and not [p for p in paragraphs if "`" in p]  # Markdown code is rendered
    assert "<code>mcpgym serve</code>" in html
    for name in ("oracle", "naive", "first-match", "random", "null-done"):
        assert f'<a href="{name}/report.html">{name}</a>' in html, name
    # one colour per series name across every chart (legend swatch followed by its name)
    legend = re.findall(r'fill="(#[0-9A-Fa-f]{6})"/><text [^>]*>([^<]+)</text>', html)
    colours: dict[str, set[str]] = {}
    for colour, name in legend:
        colours.setdefault(name, set()).add(colour)
    assert "published" in colours and all(len(c) == 1 for c in colours.values()), colours
    assert len({next(iter(c)) for c in colours.values()}) == len(colours)  # none shared
    about = html.split("<h2>About</h2>", 1)[1].split("<h2>", 1)[0]
    assert not re.search(r"127\.0\.0\.1:\d+", about)
    summary = html.split("<h2>Summary</h2>", 1)[1].split("</table>", 1)[0]
    for header in ("agent", "episodes", "success", "explicit", "natural", "reward", "errors"):
        assert f"<th>{header}</th>" in summary, header


@pytest.mark.server
def test_the_demo_fits_80_columns(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "80", "TERM": "xterm"}
    done = subprocess.run(
        [sys.executable, "-m", "calendar_gym.bench.demo", "--limit", "1", "--tiers", "T1", "T4",
         "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    text = done.stdout + done.stderr
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "eval null-needs-clarific" in done.stderr  # the progress lines are there
