"""`mcpgym serve --bridge` usage errors: exit 2 with a clear message, no worker started.
(Serving through the bridge is exercised by test_bridge_episodes.py.)"""

from __future__ import annotations

import subprocess
import sys

import pytest

from helpers.mcp import MCPGYM

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ([], "openenv is not installed beside mcpgym"),
        (["--python", "/no/such/python"], "is not an executable file"),
        (["--python", sys.executable, "--bridge-options", "[1]"], "must be a JSON object"),
        (["--python", sys.executable, "--bridge-options", "{"], "is not JSON"),
        (["--python", sys.executable, "--bridge-start-timeout", "0"], "must be positive"),
    ],
)
def test_usage_errors(extra: list[str], says: str) -> None:
    cmd = [*MCPGYM, "serve", "mod:Env", "--bridge", "openenv", "--port", "1", *extra]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and says in out.stderr, out.stderr


def test_help_names_the_backends() -> None:
    out = subprocess.run([*MCPGYM, "serve", "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    for word in (
        "--bridge",
        "verifiers-classic",
        "verifiers-v1",
        "--python",
        "--bridge-path",
        "action",
    ):
        assert word in out.stdout
