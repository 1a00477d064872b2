"""`mcpgym init demo && mcpgym build demo/` on a real engine: the scaffold's pyproject names its
environment (`[tool.mcpgym] env`), the image serves it, and an episode in the container reaches
the scaffold's oracle reward."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from container_engines import BASE, Engine
from mcpgym.client import SyncEnvClient
from mcpgym.servers.cli import main

pytestmark = pytest.mark.timeout(900)


def test_the_init_scaffold_builds_and_serves(engine: Engine, tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    assert main(["init", "demo", "--dir", str(demo)]) == 0
    tag = f"mcpgym-test-init-demo-{engine.name}:latest"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["build", str(demo), "--tag", tag, "--base", BASE, "--engine", engine.host])
    assert code == 0, out.getvalue()
    assert out.getvalue().strip().splitlines()[-1] == tag
    labels = engine.client.images.get(tag).attrs["Config"]["Labels"]
    assert labels["io.mcpgym.target"] == "demo.env:DemoEnv"
    provider = engine.provider(tag).sync()
    try:
        with SyncEnvClient.from_provider(provider) as env:
            env.reset(seed=0, code="abc")
            # the scaffold's game: reveal the code one character at a time, then submit it
            code = "".join(str(env.call_tool("reveal", position=i).result) for i in range(3))
            assert code == "abc"
            obs = env.call_tool("submit", code=code)
            assert obs.error is None and obs.done and obs.reward == 1.0, obs
    finally:
        provider.close()
        engine.client.images.remove(tag, force=True)
