"""`mcpgym validate`, `mcpgym list` and `mcpgym init` as a user runs them: exit codes, JSON,
and a scaffolded package that passes its own tests and every validation level."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from vault import FIXTURES

from mcpgym.manifest import Manifest, manifest_schema
from mcpgym.servers.cli.init import scaffold
from mcpgym.servers.cli.main import main
from mcpgym.validate import CHECKS, CheckResult, Report, validate

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def mcpgym(*args: str, cwd: Path | None = None) -> Ran:
    """`mcpgym ARGS` in this process (a fresh interpreter costs seconds on a loaded machine)."""
    out, err = io.StringIO(), io.StringIO()
    old = Path.cwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse's usage errors
                code = int(exc.code or 0)
    finally:
        os.chdir(old)
    return Ran(code, out.getvalue(), err.getvalue())


def test_validate_exit_codes() -> None:
    ok = mcpgym("validate", "mcpgym.examples.guess:GuessEnv", "--level", "static", "--json")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    report = json.loads(ok.stdout)
    assert report["exit_code"] == 0 and "timings" in report
    assert {r["name"] for r in report["results"]} == {c.name for c in CHECKS if c.level == "static"}
    bad = mcpgym("validate", str(FIXTURES / "manifests" / "typo.yaml"))
    assert bad.returncode == 2 and "did you mean 'entry_point'" in bad.stdout
    assert mcpgym("validate").returncode == 2  # usage: nothing to validate
    assert mcpgym("validate", "no-such-env-anywhere").returncode == 2
    assert mcpgym("validate", ".", "--level", "bogus").returncode == 2
    failed = mcpgym(
        "validate",
        "mcpgym.examples.guess:GuessEnv",
        "--level",
        "static",
        "--check",
        "check_pinning",
        "--check",
        "check_manifest",
    )
    assert failed.returncode == 0 and "check_pinning" in failed.stdout


def test_missing_manifest_fails_and_a_skipped_check_exits_4(tmp_path: Path) -> None:
    (tmp_path / "mod_nomanifest.py").write_text("from mcpgym.examples.guess import GuessEnv as E\n")
    sys.path.insert(0, str(tmp_path))
    try:
        out = mcpgym("validate", "mod_nomanifest:E", "--level", "static", cwd=tmp_path)
    finally:
        sys.path.remove(str(tmp_path))
    assert out.returncode == 1 and "no manifest found" in out.stdout
    report = Report(target="x", level="static")
    report.add(CheckResult("check_no_leakage", "semantic", "pass"))
    assert report.exit_code == 0
    report.results[0].status = "skip"
    assert report.exit_code == 4


def test_list_shows_installed_environments() -> None:
    out = mcpgym("list", "--json")
    assert out.returncode == 0, out.stderr
    rows = {r["name"]: r for r in json.loads(out.stdout)}
    assert rows["guess"]["entry_point"] == "mcpgym.examples.guess:GuessEnv"
    assert rows["guess"]["version"] == "1.0.0"
    assert rows["calendar"]["manifest_problem"] is None


def test_init_rejects_bad_names(tmp_path: Path) -> None:
    for name in ("Bad", "1x", "class", "a b", ""):
        with pytest.raises(ValueError):
            scaffold(name, tmp_path / "x")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep").write_text("x")
    with pytest.raises(ValueError, match="not empty"):
        scaffold("demo", tmp_path / "full")
    assert mcpgym("init", "Bad", cwd=tmp_path).returncode == 2


@pytest.mark.timeout(600)
def test_init_scaffold_passes_its_tests_and_every_level(tmp_path: Path) -> None:
    out = mcpgym("init", "my-demo", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    demo = tmp_path / "my-demo"
    pyproject = (demo / "pyproject.toml").read_text()
    assert re.search(r'"mcpgym==\d+\.\d+\.\d+"', pyproject)
    readme = (demo / "README.md").read_text()
    for command in ("mcpgym serve", "mcpgym eval", "mcpgym build", "mcpgym validate"):
        assert command in readme
    env = {**os.environ, "PYTHONPATH": str(demo)}
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore"],
        cwd=demo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
    report = validate(str(demo), level="semantic")
    assert report.exit_code == 0, report.to_text()
    assert report.get("check_pinning").status == "pass"  # type: ignore[union-attr]


def test_docs_list_every_check_and_publish_the_schema() -> None:
    page = (ROOT / "docs" / "validation.md").read_text()
    for c in CHECKS:
        assert f"| `{c.name}`" in page, c.name
        assert " ".join(c.doc.split()) in page, f"{c.name}: the docs' 'Asserts' text is stale"
    block = page.split("```json\n", 1)[1].split("```", 1)[0]
    assert json.loads(block) == manifest_schema()


@pytest.mark.timeout(300)
def test_validate_a_running_server_by_url() -> None:
    from mcpgym.validate.serve import LocalServer

    manifest = ROOT / "sdk" / "examples" / "guess.mcpgym.yaml"
    with LocalServer("mcpgym.examples.guess:GuessEnv") as server:
        report = validate(str(manifest), url=server.url, level="runtime")
    assert _failing_names(report) == [], report.to_text()
    modes = report.get("check_tool_modes")  # the served mode is checked, the other named
    assert modes is not None and modes.status == "pass" and "--url" in modes.message
    assert report.exit_code == 0  # nothing a --url run can check was left unchecked


def _failing_names(report: Report) -> list[str]:
    return [r.name for r in report.results if r.status in ("fail", "error")]


def test_tasks_names_a_task_set_and_an_unknown_one_is_a_usage_error() -> None:
    calendar = str(ROOT / "calendar_gym" / "mcpgym.yaml")
    bad = mcpgym("validate", calendar, "--tasks", "v9", "--level", "static")
    known = "['v1', 'v2', 'v3']"
    assert bad.returncode == 2 and "no task set 'v9'" in bad.stderr and known in bad.stderr
    ok = mcpgym("validate", calendar, "--tasks", "v1", "--level", "static", "--json")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert json.loads(ok.stdout)["notes"] == []  # static checks play no episode


def test_sampling_is_spread_ordered_and_fixed_by_the_seed() -> None:
    from vault import manifest

    from mcpgym.manifest import TaskSet
    from mcpgym.validate.context import Context

    def with_tasks(**sets: dict[str, object]) -> Manifest:
        tasks = {n: TaskSet.model_validate(ts) for n, ts in sets.items()}
        return manifest().model_copy(update={"tasks": tasks})

    m = with_tasks(all={"source": "seeds", "seeds": list(range(40))})
    runs = [Context(None, manifest=m, seed=s) for s in (0, 0, 1)]
    picks = [[x.id for x in c.sample("floor", 5)] for c in runs]
    assert picks[0] == picks[1] and picks[0] != picks[2]
    ids = [s.id for s in runs[0].specs()]
    assert len(ids) == 40 and len(set(picks[0])) == 5
    assert picks[0] == [i for i in ids if i in picks[0]]  # in the set's order
    assert [x.id for x in runs[0].sample("floor", 50)] == ids  # fewer than asked: all of them
    assert runs[0].sampled(5) == "5 of 40 episodes (sampled, seed 0)"
    assert runs[0].sampled(40) == "all 40 episodes"
    frozen = with_tasks(
        new={"source": "seeds", "seeds": [1]},
        old={"source": "seeds", "seeds": [2], "validate": False},
    )
    assert [s.id for s in Context(None, manifest=frozen).specs()] == ["new/seed1"]
    named = Context(None, manifest=frozen, tasks=["old"])
    assert [s.id for s in named.specs()] == ["old/seed2"]
    assert named.tasks_note() == "tasks: old (1 episodes); not played: new (--tasks NAME plays one)"


def test_an_untyped_tool_argument_is_a_warning_naming_the_file() -> None:
    from vault import manifest

    report = validate(
        None,
        manifest=manifest("UntypedTool", tools=[{"name": "note"}]),
        level="static",
    )
    hints = report.get("check_tool_hints")
    assert hints is not None and hints.status == "fail" and hints.severity == "warn"
    assert "vault_fixtures.py:" in hints.message and "(UntypedTool.note): text untyped" in (
        hints.message
    )
    assert "WARN  check_tool_hints" in report.to_text()
    assert report.exit_code == 0, report.to_text()  # a warning: reported, not failed
