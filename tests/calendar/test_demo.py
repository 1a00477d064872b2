"""The main job, `python -m calendar_gym.demo`: a small subset in process, the real command
against a real `mcpgym serve` subprocess, and its exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from calendar_gym import demo


def _summary(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "summary.json").read_text(encoding="utf-8"))


def test_demo_in_process_prints_tables_and_writes_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = demo.main(["--in-process", "--limit", "1", "--out", str(tmp_path), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "oracle: success by tier" in out and "naive: success by tier" in out
    assert "Failure distribution" in out and "published" in out and "OK" in out
    for name in ("report.md", "report.html", "oracle/episodes.jsonl", "naive/report.html"):
        assert (tmp_path / name).is_file(), name
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## Failure distribution, all agents" in report and "| wrong_args |" in report
    oracle = _summary(tmp_path / "oracle")
    assert oracle["episodes"] == 16 and oracle["success_rate"] == 1.0
    section = oracle["sections"]["Calendar benchmark"]
    assert section["success"]["overall"] == 1.0
    assert set(section["published_split"]) == {"wrong_tool", "wrong_args", "wrong_order", "other"}


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
    monkeypatch.setattr(demo, "OracleAgent", _Idle)
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
        [sys.executable, "-m", "calendar_gym.demo", "--limit", "1", "--out", str(tmp_path),
         "--quiet"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "environment: http://127.0.0.1:" in done.stdout
    naive = _summary(tmp_path / "naive")
    assert naive["episodes"] == 16 and naive["errors"] == 0
    assert naive["run"]["environment"].startswith("http://127.0.0.1:")
    assert (tmp_path / "report.html").read_text(encoding="utf-8").count("<svg") >= 3
