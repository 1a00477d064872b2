"""The README's examples run as written: the authoring example in-process, then the client
example against that same environment served by a real `mcpgym serve` process."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from helpers.wait import wait_until

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


def test_readme_has_two_commands() -> None:
    text = (ROOT / "README.md").read_text()
    assert "pip install rust-just && just demo" in text
    assert "pip install rust-just && just test" in text
    ci = (ROOT / ".ci" / "run").read_text()
    assert "just test\n" in ci


def test_authoring_example_runs() -> None:
    exec(compile(BLOCKS[0], "README.md[0]", "exec"), {"__name__": "readme"})


@pytest.mark.server
def test_client_example_runs_against_served_notes(tmp_path: Path) -> None:
    (tmp_path / "mymodule.py").write_text(BLOCKS[0])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "mcpgym.servers", "serve", "mymodule:Notes", "--port", str(port)]
    log = tmp_path / "server.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(cmd, cwd=tmp_path, stderr=err)
    try:

        def healthy() -> bool:
            assert proc.poll() is None, log.read_text()
            try:
                return httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200
            except httpx.TransportError:
                return False

        wait_until(healthy, timeout=20, what="mcpgym serve mymodule:Notes")
        code = BLOCKS[1].replace("127.0.0.1:8000", f"127.0.0.1:{port}")
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "1"
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def _claude() -> str | None:
    """Claude Code from PATH or the conformance tools folder (`bash .ci/node-tools.sh`)."""
    pinned = ROOT / ".tools" / "node" / "bin" / "claude"
    return shutil.which("claude") or (str(pinned) if pinned.exists() else None)


@pytest.mark.interop
@pytest.mark.timeout(1200)
def test_readme_top_to_bottom_in_a_fresh_venv(tmp_path: Path) -> None:
    """The README's path as a newcomer walks it: `just setup` (what `just test` runs first) into a
    fresh venv prints no warning of ours (the newest pip prints the build backend's), `mcpgym`
    on PATH, serve the README's Notes from a temp folder and drive it with the README's client.
    The `claude` lines are `test_readme_claude_lines` (conformance suite)."""
    venv_dir = tmp_path / "venv"
    just = shutil.which("just")
    assert just, "`just` is not on PATH: pip install rust-just (the README's first step)"
    install = subprocess.run(
        [just, "--set", "venv", str(venv_dir), "setup"],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"},
        capture_output=True,
        text=True,
        timeout=1000,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    noise = [
        line
        for line in (install.stdout + install.stderr).splitlines()
        if "warning" in line.lower() and "Location 'file:" not in line  # this machine's indexes
    ]
    assert noise == [], "\n".join(noise)

    work = tmp_path / "work"
    work.mkdir()
    (work / "mymodule.py").write_text(BLOCKS[0])
    env = {**os.environ, "PATH": f"{venv_dir / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    mcpgym = shutil.which("mcpgym", path=env["PATH"])
    assert mcpgym == str(venv_dir / "bin" / "mcpgym")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path / "serve.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            ["mcpgym", "serve", "mymodule:Notes", "--port", str(port)],
            cwd=work,
            env=env,
            stderr=err,
        )
    try:

        def healthy() -> bool:
            assert proc.poll() is None, log.read_text()
            try:
                return httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200
            except httpx.TransportError:
                return False

        wait_until(healthy, timeout=60, what="mcpgym serve mymodule:Notes")
        first = log.read_text().splitlines()[0]
        assert first.startswith(f"mcpgym serve: Notes (simulation) at http://127.0.0.1:{port}")
        assert "tools: add_note, peek" in first
        code = BLOCKS[1].replace("127.0.0.1:8000", f"127.0.0.1:{port}")
        out = subprocess.run(
            [str(venv_dir / "bin" / "python"), "-c", code],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0 and out.stdout.strip() == "1", out.stderr
    finally:
        proc.terminate()
        proc.wait(timeout=15)


@pytest.mark.conformance
@pytest.mark.timeout(600)
def test_readme_claude_lines(tmp_path: Path) -> None:
    """The README's `claude mcp add ... -- mcpgym serve mymodule:Notes --stdio`, then
    `claude mcp list` really connects."""
    claude = _claude()
    if claude is None:
        if os.environ.get("CI"):
            pytest.fail("Claude Code is missing: run bash .ci/node-tools.sh")
        pytest.skip("Claude Code is not installed (bash .ci/node-tools.sh installs it)")
    work = tmp_path / "work"
    work.mkdir()
    (work / "mymodule.py").write_text(BLOCKS[0])
    # `mcpgym` as the README's newcomer has it: on PATH, from the environment running the tests
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    home = tmp_path / "home"
    home.mkdir()
    cenv = {
        **env,
        "HOME": str(home),
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    readme = (ROOT / "README.md").read_text().splitlines()
    add = next(line for line in readme if line.startswith("claude mcp add ")).split()
    added = subprocess.run(
        [claude, *add[1:]], cwd=work, env=cenv, capture_output=True, text=True, timeout=120
    )
    assert added.returncode == 0, added.stderr
    listed = subprocess.run(
        [claude, "mcp", "list"], cwd=work, env=cenv, capture_output=True, text=True, timeout=120
    )
    assert "notes" in listed.stdout and "Connected" in listed.stdout, listed.stdout + listed.stderr


def test_the_task_count_the_readme_names_is_the_default_suite_s() -> None:
    """Issue 29: the README said 50 tasks where the default suite has 51."""
    from calendar_gym.suite import specs

    named = re.search(r"plus (\d+) graded tasks", (ROOT / "README.md").read_text())
    assert named is not None
    tasks = {spec.id.split("/")[0] for spec in specs()}  # task/phrasing/error-mode
    assert int(named.group(1)) == len(tasks)
