"""`mcpgym eval` as a program: help, a killed run resumed, the entry point."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from helpers.wait import wait_until
from mcpgym.harness.eval.cli import main

HERE = Path(__file__).resolve().parent
EVAL = [sys.executable, "-m", "mcpgym.harness.eval.cli", "eval"]


def complete_records(path: Path) -> list[str]:
    """Spec ids of the complete lines of an episodes.jsonl (a partial last line is ignored)."""
    if not path.exists():
        return []
    data = path.read_text()
    return [json.loads(line)["spec_id"] for line in data[: data.rfind("\n") + 1].splitlines()]


def test_help_describes_every_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["eval", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    for option in (
        "--env",
        "--url",
        "--agent",
        "--tasks",
        "--episodes",
        "--seed",
        "--concurrency",
        "--turn-timeout",
        "--episode-timeout",
        "--out",
        "--model-url",
        "--model",
        "--quiet",
        "--repeat",
        "resumes",
    ):
        assert option in text


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["eval", "--env", "nope", "--quiet"]) == 2
    assert "expected MODULE:ATTR" in capsys.readouterr().err
    env = "mcpgym.examples.guess:GuessEnv"
    assert main(["eval", "--env", env, "--agent", "wizard", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "unknown agent 'wizard'; available: " in err and "llm" in err and "random" in err
    assert main(["eval", "--env", env, "--agent", "llm", "--quiet"]) == 2
    assert "--model-url and --model" in capsys.readouterr().err


def test_tasks_and_sections_from_modules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "eval",
            "--env",
            "mcpgym.examples.guess:GuessEnv",
            "--agent",
            "eval_helpers:Bisect",
            "--tasks",
            "eval_helpers:suite",
            "--section",
            "eval_helpers:section",
            "--out",
            str(tmp_path),
            "--repeat",
            "2",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "success rate" in out and "100.0%" in out and "pass@2" in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["episodes"] == 6 and summary["pass_at_k"]["min_attempts"] == 2
    assert summary["sections"] == {"Tiers seen": {"tiers": ["T1", "T2"]}}
    assert "## Tiers seen" in (tmp_path / "report.md").read_text()


@pytest.mark.slow
def test_a_killed_run_resumes_with_only_the_missing_episodes(tmp_path: Path) -> None:
    out, log = tmp_path / "out", tmp_path / "started.log"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
        "EVAL_START_LOG": str(log),
    }
    cmd = [
        *EVAL,
        "--env",
        "eval_helpers:PacedGuess",
        "--agent",
        "eval_helpers:logging_bisect",
        "--episodes",
        "120",
        "--seed",
        "50",
        "--concurrency",
        "4",
        "--out",
        str(out),
        "--quiet",
    ]
    episodes = out / "episodes.jsonl"
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE)
    try:
        wait_until(
            lambda: proc.poll() is not None or len(complete_records(episodes)) >= 30,
            timeout=60,
            what="30 episodes on disk",
        )
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        if proc.stderr:
            proc.stderr.close()
    before = complete_records(episodes)
    assert 30 <= len(before) < 120
    first_started = log.read_text().splitlines()
    log.unlink()

    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    resumed = re.search(r"^resumed: (\d+) done, (\d+) to run", done.stderr, re.MULTILINE)
    assert resumed, done.stderr  # said even with --quiet
    assert int(resumed[1]) == len(before) and int(resumed[2]) == 120 - len(before)
    all_ids = [f"seed-{s}" for s in range(50, 170)]
    second_started = log.read_text().splitlines()
    assert sorted(second_started) == sorted(set(all_ids) - set(before))
    assert set(first_started) >= set(before)
    final = [json.loads(line) for line in episodes.read_text().splitlines()]
    assert [r["spec_id"] for r in final] == all_ids  # exactly one record per spec, in order
    assert all(r["success"] for r in final)
    assert json.loads((out / "summary.json").read_text())["episodes"] == 120


@pytest.mark.skipif(
    not any(ep.name == "eval" for ep in entry_points(group="mcpgym.commands")),
    reason="the eval entry point is not installed (pyproject [project.entry-points])",
)
def test_mcpgym_eval_is_a_subcommand_of_mcpgym(tmp_path: Path) -> None:
    from mcpgym.servers.cli.main import main as mcpgym_main

    code = mcpgym_main(
        [
            "eval",
            "--env",
            "mcpgym.examples.guess:GuessEnv",
            "--episodes",
            "3",
            "--max-steps",
            "2",
            "--out",
            str(tmp_path),
            "--quiet",
        ]
    )
    assert code == 0
    assert len((tmp_path / "episodes.jsonl").read_text().splitlines()) == 3
