"""`mcpgym serve`'s garbage-collector settings (servers/gc_tuning.py), seen from inside a real
server: the gen-0 threshold is raised, the start-up objects are frozen once the lifespan start-up
ran, and what sessions create afterwards is still scanned (so their cycles are still collected)."""

import json
import os
import textwrap
from pathlib import Path

import pytest
from websockets.sync.client import connect

from helpers.npm import serve
from mcpgym.servers.gc_tuning import GEN0_THRESHOLD

_PROBE_ENV = '''
import gc
from typing import Any
from mcpgym import MCPEnvironment, Observation, tool


class GcProbeEnv(MCPEnvironment):
    """Reports the collector's state as seen by the serving process."""

    blocking = False

    def reset(self, seed=None, episode_id=None, **kw: Any) -> Observation:
        super().reset(seed=seed, episode_id=episode_id)
        self.cycle = {"self": None}
        self.cycle["self"] = self.cycle  # a reference cycle made by a session
        return Observation()

    @tool
    def gc_state(self) -> dict:
        """Thresholds, the frozen count, and whether session objects are still scanned."""
        scanned = {id(o) for o in gc.get_objects()}  # generations 0-2, not the frozen ones
        return {
            "threshold": list(gc.get_threshold()),
            "frozen": gc.get_freeze_count(),
            "env_scanned": id(self) in scanned,
            "cycle_scanned": id(self.cycle) in scanned,
            "module_scanned": id(gc_state_module_marker) in scanned,
        }


gc_state_module_marker = {"made": "at import"}
'''


@pytest.mark.server
def test_serve_raises_gen0_and_freezes_only_startup_objects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "gc_probe_env.py").write_text(textwrap.dedent(_PROBE_ENV))
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    )
    with serve("gc_probe_env:GcProbeEnv", tmp_path) as served:
        with connect(f"ws://127.0.0.1:{served.port}/ws", open_timeout=10) as ws:
            ws.send(json.dumps({"type": "reset", "data": {}}))
            assert json.loads(ws.recv(timeout=10))["type"] == "observation"
            step = {"type": "call_tool", "tool_name": "gc_state", "arguments": {}}
            ws.send(json.dumps({"type": "step", "data": step}))
            reply = json.loads(ws.recv(timeout=10))
    assert reply["type"] == "observation", reply
    state = reply["data"]["observation"]["result"]
    assert state["threshold"][0] == GEN0_THRESHOLD
    assert state["threshold"][1:] == [10, 10]  # gen-1 and gen-2 keep CPython's defaults
    # the imports and the app were frozen after start-up (tens of thousands of objects) ...
    assert state["frozen"] > 10_000, state
    assert state["module_scanned"] is False
    # ... but a session's environment and the cycles it makes are still collectable
    assert state["env_scanned"] is True
    assert state["cycle_scanned"] is True


def test_tune_wraps_the_lifespan_and_keeps_its_state() -> None:
    """The lifespan start-up runs first, then the freeze; shut-down still runs; state passes."""
    import asyncio
    import contextlib
    import gc
    from collections.abc import AsyncGenerator

    from starlette.applications import Starlette

    from mcpgym.servers import gc_tuning

    events: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncGenerator[dict[str, int]]:
        events.append("startup")
        yield {"answer": 42}
        events.append("shutdown")

    app = Starlette(lifespan=lifespan)
    before = gc.get_threshold()
    frozen: list[int] = []
    real_freeze = gc_tuning.freeze_startup_objects
    try:
        gc_tuning.freeze_startup_objects = lambda: frozen.append(len(events)) or 0  # type: ignore[assignment]
        gc_tuning.tune(app, gen0_threshold=1234)
        assert gc.get_threshold()[0] == 1234

        async def run() -> object:
            async with app.router.lifespan_context(app) as state:
                events.append("serving")
                return state

        assert asyncio.run(run()) == {"answer": 42}
    finally:
        gc_tuning.freeze_startup_objects = real_freeze  # type: ignore[assignment]
        gc.set_threshold(*before)
    assert events == ["startup", "serving", "shutdown"]
    assert frozen == [1]  # frozen once, after start-up and before serving
