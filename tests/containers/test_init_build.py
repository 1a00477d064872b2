"""`mcpgym init demo && mcpgym build demo/` on a real engine: the scaffold's pyproject names its
environment (`[tool.mcpgym] env`), the image serves it, and an episode in the container reaches
the scaffold's oracle reward."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from container_engines import BASE, Engine
from mcpgym.client import SyncEnvClient
from mcpgym.servers.cli.main import main

pytestmark = pytest.mark.timeout(900)


_STEP_LINE = re.compile(
    r"\] (?:stage (?P<stage>\d+/\d+) )?step (?P<i>\d+)/(?P<n>\d+): "
    r"(?P<text>.*?) (?P<end>done|failed) \("
)


def test_the_init_scaffold_builds_and_serves(engine: Engine, tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    assert main(["init", "demo", "--dir", str(demo)]) == 0
    tag = f"mcpgym-test-init-demo-{engine.name}:latest"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["build", str(demo), "--tag", tag, "--base", BASE, "--engine", engine.host])
    assert code == 0, out.getvalue() + err.getvalue()
    assert out.getvalue() == tag + "\n"  # stdout is the tag alone, whatever the progress said
    # issue 29: 28 s of silence, then the tag. Now one line per stage on a non-terminal stderr:
    # the wheels, then every step of the engine's build, in order, none left open.
    stages = err.getvalue().splitlines()
    assert stages[0].startswith(f"mcpgym build: [1] the wheel of {demo} built ("), stages
    assert any("mcpgym's wheel " in line for line in stages[1:2]), stages
    # Docker numbers the steps over the whole build (`step 3/12`), Podman per stage of a
    # multi-stage build (`stage 1/2 step 3/7`): within each stage, every step once, in order.
    found = [_STEP_LINE.search(line) for line in stages]
    steps = [m for m in found if m]
    assert steps, stages
    by_stage: dict[str, list[tuple[int, int]]] = {}
    for m in steps:
        by_stage.setdefault(m["stage"] or "", []).append((int(m["i"]), int(m["n"])))
    for numbered in by_stage.values():
        total = numbered[0][1]
        assert numbered == [(i, total) for i in range(1, total + 1)], stages
    assert steps[0]["text"].upper().startswith("FROM " + BASE.upper())
    assert all(m["end"] == "done" for m in steps), stages
    assert "\x1b" not in err.getvalue()
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
