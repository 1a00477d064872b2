"""The README's examples run as written: the authoring example in-process, then the client
example against that same environment served by a real `mcpgym serve` process."""

from __future__ import annotations

import re
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
