"""A caller killed mid-run without its reaper (`reaper=False`; see test_reaper.py for the default)
leaves labelled containers; `mcpgym providers gc` removes just those."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from container_engines import Engine
from mcpgym.providers._engine import listed

pytestmark = pytest.mark.timeout(900)

CHILD = textwrap.dedent(
    """
    import asyncio, json, sys
    from mcpgym.providers.docker import DockerProvider
    from mcpgym.providers.podman import PodmanProvider

    async def main() -> None:
        cls = PodmanProvider if sys.argv[1] == "podman" else DockerProvider
        provider = cls(sys.argv[3], engine=sys.argv[2], health_deadline_s=300, reaper=False)
        handles = await asyncio.gather(provider.start(), provider.start())
        print(json.dumps({"run": provider.run_id, "ids": [h.id for h in handles]}), flush=True)
        await asyncio.Event().wait()  # mid-run: killed here, never cleans up

    asyncio.run(main())
    """
)


def _gc(engine: Engine, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpgym.servers", "providers", "gc", "--engine", engine.host, *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_gc_removes_what_a_killed_run_left_and_spares_live_runs(
    engine: Engine, guess_image: str
) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, engine.name, engine.host, guess_image],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    assert line, f"child exited {child.wait()}"
    started = json.loads(line)
    with engine.provider(guess_image).sync() as live_sync:
        live = live_sync.provider
        live_handle = live_sync.start()
        # While the child lives, gc leaves its containers alone.
        assert _gc(engine).returncode == 0
        assert len(engine.managed(started["run"])) == 2

        os.kill(child.pid, signal.SIGKILL)
        child.wait(30)
        child.stdout.close()
        assert len(engine.managed(started["run"])) == 2  # the crash left them behind

        dry = _gc(engine, "--dry-run")
        assert dry.returncode == 0 and all(i in dry.stdout for i in started["ids"]), dry.stdout
        assert len(engine.managed(started["run"])) == 2

        done = _gc(engine)
        assert done.returncode == 0, done.stderr
        assert all(f"removed container {i}" in done.stdout for i in started["ids"]), done.stdout
        assert engine.managed(started["run"]) == []
        for cid in started["ids"]:
            assert listed(engine.client, {"name": f"^/?{cid}$"}) == []
        # The live run is untouched until named.
        names = [c["Names"][0].lstrip("/") for c in engine.managed(live.run_id)]
        assert names == [live_handle.id]
        assert live_handle.id not in done.stdout
    assert engine.managed(live.run_id) == []
    again = _gc(engine).stdout
    assert started["run"] not in again and live.run_id not in again


def test_gc_run_option_removes_a_named_live_run(engine: Engine, guess_image: str) -> None:
    with engine.provider(guess_image).sync() as provider:
        handle = provider.start(wait=False)
        run = provider.provider.run_id
        done = _gc(engine, "--run", run)
        assert done.returncode == 0 and handle.id in done.stdout
        assert engine.managed(run) == []
        provider.stop(handle)  # already gone: a no-op


def test_gc_without_an_engine_is_a_clear_error() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcpgym.servers",
            "providers",
            "gc",
            "--engine",
            "unix:///nonexistent/docker.sock",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2 and "error" in proc.stderr and "Traceback" not in proc.stderr
