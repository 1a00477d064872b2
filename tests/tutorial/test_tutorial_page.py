"""docs/tutorial.md as a reader walks it (tests/helpers/tutorial_walk.py plays the blocks): the
default suite plays every step that needs no more than Python (author, validate, serve, the web
page, eval); `just test-tutorial` (marker `tutorial`) plays them all, the container build on a
Docker engine and Claude Code from npm included. Each step's time is printed."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import httpx
import pytest
import yaml

from helpers.tutorial_walk import PAGE, ROOT, Step, Walk, outputs, steps

ORDER = ["setup", "author", "manifest", "validate", "serve", "web", "eval", "build", "claude"]


def test_every_command_of_the_page_is_a_step() -> None:
    """A fence the reader would type or save is a marked step (or the output of one), so the
    walk below runs every command; the steps go author → ... → Claude Code."""
    text = PAGE.read_text()
    fences = re.findall(r"(?:^(<!-- [^\n]* -->)\n)?^```(\w*)\n", text, re.M)
    fences = fences[::2]  # opening fences only: each block is an opening and a closing fence
    for comment, lang in fences:
        if comment.startswith("<!-- tutorial-output: "):
            assert lang == "text"
            continue
        assert comment.startswith("<!-- tutorial: "), f"an unmarked ```{lang} block in {PAGE}"
    names = [s.name for s in steps()]
    assert len(names) == len(set(names)), names
    assert [n for n in names if n in ORDER] == ORDER
    assert set(outputs()) <= set(names)


def test_the_tutorial_is_the_first_page_after_the_quickstart() -> None:
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    flat = [next(iter(item.values())) for item in nav if isinstance(item, dict)]
    assert flat[flat.index("quickstart.md") + 1] == "tutorial.md"
    assert "docs/tutorial.md" in (ROOT / "README.md").read_text()
    assert "(tutorial.md)" in (ROOT / "docs" / "quickstart.md").read_text()


def _web_labels() -> list[str]:
    """The controls the web step tells the reader to click or read (bold in its section)."""
    text = PAGE.read_text()
    section = text[text.index("<!-- tutorial: web ") :]
    section = section[: section.index("\n## ")]
    return re.findall(r"\*\*([^*]+)\*\*", section)


def _check_web(walk: Walk) -> None:
    html = httpx.get(f"http://127.0.0.1:{walk.port}/web", timeout=10).text
    missing = [label for label in _web_labels() if f">{label}<" not in html]
    assert missing == [], f"the page names controls /web does not have: {missing}"
    assert "/web" in walk.printed["web"].splitlines()[0]  # the start-up line lists /web
    schema = httpx.get(f"http://127.0.0.1:{walk.port}/schema", timeout=10)
    assert schema.status_code == 200


def _walk(tmp_path: Path, play: list[Step], capsys: pytest.CaptureFixture[str], **kw) -> Walk:
    folder, scratch = tmp_path / "drawers", tmp_path / "scratch"
    folder.mkdir()
    scratch.mkdir()

    def report(line: str) -> None:
        with capsys.disabled():
            print(line, flush=True)

    walk = Walk(folder, scratch, report, **kw)
    shown = outputs()
    try:
        for step in play:
            walk.run(step)
            if step.name in shown:
                walk.check_output(step.name, shown[step.name])
            if step.name == "web":
                _check_web(walk)
        report(f"tutorial: {sum(walk.timings.values()):.0f} s for {len(play)} steps")
    finally:
        walk.stop()
    return walk


def _check_eval(walk: Walk) -> None:
    for run, rate in (("oracle", "100.0% (20/20)"), ("random", "0.0% (0/20)")):
        report = (walk.folder / "runs" / run / "report.md").read_text()
        assert f"| success rate | {rate} |" in report, report[:2000]
    # the page's claim about the random agent's tool errors and the environment log
    assert "Traceback" in (walk.folder / "runs" / "random" / "environment.log").read_text()
    assert "only 5 drawers" in (walk.folder / "runs" / "random" / "environment.log").read_text()


@pytest.mark.server
@pytest.mark.timeout(900)
def test_the_tutorial_as_a_reader_runs_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every step that needs nothing but Python, in a fresh venv the page's setup block makes."""
    walk = _walk(tmp_path, [s for s in steps() if s.needs is None], capsys)
    _check_eval(walk)
    first = walk.printed["validate-first"]
    assert "exit code 1" in first and "FAIL check_floor_gap" in " ".join(first.split())
    assert "exit code 0" in walk.printed["validate"]
    assert "29 pass, 2 n/a; exit code 0" in walk.printed["validate"]  # as the page says


def _claude() -> str | None:
    pinned = ROOT / ".tools" / "node" / "bin" / "claude"
    return shutil.which("claude") or (str(pinned) if pinned.exists() else None)


@pytest.mark.tutorial
@pytest.mark.timeout(1800)
def test_the_whole_tutorial(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """All steps, the container build (`needs=docker`) and Claude Code (`needs=claude`)
    included: `just test-tutorial` starts the engine and installs Claude Code first."""
    claude = _claude()
    found = {"Claude Code": claude, "docker": shutil.which("docker")}
    missing = [what for what, path in found.items() if path is None]
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{missing} missing: run `just test-tutorial`")
        pytest.skip(f"{missing} not installed (`just test-tutorial` installs them)")
    assert claude is not None
    home = tmp_path / "home"
    home.mkdir()
    walk = _walk(
        tmp_path,
        steps(),
        capsys,
        extra_path=[str(Path(claude).parent)],
        extra_env={
            "HOME": str(home),  # Claude Code's settings; uv keeps its cache
            "UV_CACHE_DIR": os.environ.get("UV_CACHE_DIR", str(Path.home() / ".cache" / "uv")),
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        },
    )
    _check_eval(walk)
    docker_report = (walk.folder / "runs" / "docker" / "report.md").read_text()
    assert "| success rate | 100.0% (4/4) |" in docker_report
    listed = walk.printed["claude"]
    assert "drawers" in listed and "Connected" in listed, listed


def test_the_quickstart_and_readme_put_mcpgym_on_path_before_using_it() -> None:
    """Issue 29: the quickstart assumed `mcpgym` on PATH without saying to activate `.venv`."""
    for page in (ROOT / "docs" / "quickstart.md", ROOT / "README.md"):
        text = page.read_text()
        first_use = min(text.index(cmd) for cmd in ("mcpgym serve", "mcpgym --help") if cmd in text)
        assert text.find("source .venv/bin/activate") in range(first_use), page.name
