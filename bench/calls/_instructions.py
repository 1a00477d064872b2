"""Deterministic cost per WS tool-call step: user-space instructions counted by valgrind/callgrind.

Wall-clock and CPU-time figures swing by ±30 % on a shared machine; instruction counts do not.
Two modes (needs `valgrind`; slow: ~1-2 minutes each):

  servers     each server (floor, mcpgym) runs under callgrind with instrumentation off; after
              start-up and a warm-up, instrumentation is switched on for N single-session steps
              driven from outside, so the figure is everything the server process executes per
              step in user space (uvloop, uvicorn, Starlette, websockets, mcpgym, pydantic, json).
  components  in-process: each part of mcpgym's per-step path (Dispatcher.handle_text and the
              reply encoding) run N times under callgrind, instrumentation toggled around each.

`bench/run.py --only instructions` runs the servers mode for WS steps and `/mcp` tools/call
(bench/figures/_measure_instructions.py).

Usage: python bench/calls/_instructions.py [servers|components] [--steps N]
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/

from figures._measure_load import MCP_CALL, RESET_FRAME, STEP_FRAME

from calls._servers import HOST, ROOT, _health_ok, free_port, server_command


def _totals(prefix: str) -> list[tuple[str, int]]:
    """(trigger, instructions) of every callgrind dump file `prefix.N`."""
    out: list[tuple[str, int]] = []
    for path in sorted(glob.glob(prefix + ".*"), key=lambda p: int(p.rsplit(".", 1)[1])):
        trigger, total = "", 0
        for line in Path(path).read_text().splitlines():
            if line.startswith("desc: Trigger:"):
                trigger = line.split(":", 2)[2].strip().removeprefix("dump").strip()
            elif line.startswith("totals:"):
                total = int(line.split()[1])
        out.append((trigger, total))
    return out


async def _steps(url: str, n: int) -> None:
    from websockets.asyncio.client import connect

    async with connect(url, compression=None, ping_interval=None) as ws:
        await ws.send(RESET_FRAME)
        await ws.recv()
        for _ in range(n):
            await ws.send(STEP_FRAME)
            json.loads(await ws.recv())


async def _mcp_calls(url: str, n: int) -> None:
    """`n` tools/call requests on one 2025-11-25 session, as bench/calls/_load.py's MCP client."""
    from calls._load import _MCP_HEADERS, _MCP_VERSION, _header, _Http1

    conn = _Http1(url)
    await conn.open()
    try:
        init = {
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": _MCP_VERSION, "capabilities": {},
                       "clientInfo": {"name": "mcpgym-bench", "version": "1"}},
        }  # fmt: skip
        status, raw, _ = await conn.request(
            conn.head("POST", _MCP_HEADERS), json.dumps(init).encode()
        )
        session = _header(raw, b"mcp-session-id")
        if status != 200 or not session:
            raise RuntimeError(f"initialize: {status}")
        head = conn.head(
            "POST", _MCP_HEADERS | {"Mcp-Session-Id": session, "Mcp-Protocol-Version": _MCP_VERSION}
        )
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await conn.request(head, json.dumps(note).encode())
        for i in range(n):
            body = {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": MCP_CALL}
            status, _, reply = await conn.request(head, json.dumps(body).encode())
            if status != 200 or "result" not in json.loads(reply):
                raise RuntimeError(f"tools/call: {status} {reply[:200]!r}")
    finally:
        await conn.close()


def server_instructions(
    name: str,
    steps: int,
    tmp: Path,
    kinds: tuple[str, ...] = ("ws",),
    repeats: int = 1,
    warmup: int = 300,
) -> dict[str, list[float]]:
    """Instructions per request of server `name` under callgrind, for each kind ("ws": a WS
    call_tool step, "mcp": a `/mcp` tools/call) in `repeats` separate windows of `steps`."""
    port = free_port()
    out = str(tmp / f"cg.{name}")
    cmd = [
        "valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
        *server_command(name, port),
    ]  # fmt: skip
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    drive = {
        "ws": (_steps, f"ws://{HOST}:{port}/ws"),
        "mcp": (_mcp_calls, f"http://{HOST}:{port}/mcp"),
    }
    per: dict[str, list[float]] = {kind: [] for kind in kinds}
    try:
        deadline = time.monotonic() + 300
        while not _health_ok(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{name} under valgrind did not start")
            time.sleep(0.5)
        for kind in kinds:
            fn, url = drive[kind]
            asyncio.run(fn(url, warmup))  # warm-up, not counted
            for r in range(repeats):
                label = f"{kind}{r}"
                _ctl("-z", str(proc.pid))
                _ctl("-i", "on", str(proc.pid))
                asyncio.run(fn(url, steps))
                _ctl("-i", "off", str(proc.pid))
                _ctl("-d", label, str(proc.pid))
                totals = dict(_totals(out))
                per[kind].append(totals.get(label, 0) / steps)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    return per


def servers(steps: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        per = {
            name: server_instructions(name, steps, Path(tmp))["ws"][0]
            for name in ("floor", "mcpgym", "mcpgym-pool")
        }
    print(f"user-space instructions per single-session WS tool-call step ({steps} steps):")
    for name, n in per.items():
        print(f"  {n / 1e3:8.1f} k  {name}")
    print(f"  ratio mcpgym / floor: {per['mcpgym'] / per['floor']:.2f}")


def _ctl(*args: str) -> None:
    subprocess.run(["callgrind_control", *args], check=True, capture_output=True)


async def _components(n: int) -> None:
    """Runs inside callgrind (re-executed by `components`)."""
    from calls._floor import _reply
    from mcpgym.examples.guess import GuessEnv
    from mcpgym.servers.app import create_app
    from mcpgym.servers.dispatch import observation_payload
    from mcpgym.servers.sim.ws import _encode
    from mcpgym.types import CallToolObservation

    app = create_app(GuessEnv)
    session = await app.state.sessions.open(transport="ws")
    dispatcher, env = app.state.dispatcher, session.env
    await dispatcher.reset(session, {"seed": 7})
    data = json.loads(STEP_FRAME)["data"]
    action = env.parse_action(data)
    spec = env.get_tool("guess")
    kwargs = spec.validate({"n": 50})
    value = env.guess(n=50)
    obs = await env.astep(action)
    reply, _ = await dispatcher.handle_text(session, STEP_FRAME)
    result = {"verdict": "lower", "guesses": 1}

    async def whole() -> None:
        r, _ = await dispatcher.handle_text(session, STEP_FRAME)
        _encode(r)  # type: ignore[arg-type]

    async def noop() -> None:
        return None

    def floor_app() -> str:
        msg = json.loads(STEP_FRAME)
        return json.dumps({"type": "observation", "data": _reply(msg)}, separators=(",", ":"))

    rows: list[tuple[str, Callable[[], Any]]] = [
        ("baseline", noop),
        ("floor app: loads + _reply + dumps", floor_app),
        ("mcpgym: handle_text + _encode", whole),
        ("  json.loads(frame)", lambda: json.loads(STEP_FRAME)),
        ("  Dispatcher.step", lambda: dispatcher.step(session, data, None)),
        ("    env.parse_action", lambda: env.parse_action(data)),
        ("    env.astep", lambda: env.astep(action)),
        ("      env.call_tool", lambda: env.call_tool("guess", {"n": 50})),
        ("        ToolSpec.validate", lambda: spec.validate({"n": 50})),
        ("        env._exclusive(guess)", lambda: env._exclusive(env.guess, (), kwargs, None)),
        ("          guess() itself", lambda: env.guess(**kwargs)),
        ("        ToolSpec.dump_result", lambda: spec.dump_result(value)),
        ("      CallToolObservation(...)",
         lambda: CallToolObservation(tool_name="guess", result=result)),
        ("      _finish incl. a CallToolObservation",
         lambda: env.finish_step(action, CallToolObservation(tool_name="guess", result=result))),
        ("    observation_payload", lambda: observation_payload(obs)),
        ("  _encode(reply)", lambda: _encode(reply)),  # type: ignore[arg-type]
    ]  # fmt: skip
    pid = str(os.getpid())
    for i, (_, fn) in enumerate(rows):
        for _ in range(50):
            r = fn()
            if asyncio.iscoroutine(r):
                await r
        _ctl("-z", pid)  # blocking on purpose: nothing may run between the toggles
        _ctl("-i", "on", pid)
        for _ in range(n):
            r = fn()
            if asyncio.iscoroutine(r):
                await r
        _ctl("-i", "off", pid)
        _ctl("-d", f"row{i}", pid)
    print(json.dumps([label for label, _ in rows]))


def components(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "cg")
        proc = subprocess.run(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
             sys.executable, __file__, "_inside", "--steps", str(n)],
            cwd=ROOT, capture_output=True, text=True, timeout=1800,
        )  # fmt: skip
        if proc.returncode != 0:
            raise SystemExit(proc.stderr[-2000:])
        labels = json.loads(proc.stdout.strip().splitlines()[-1])
        totals = {t: v for t, v in _totals(out)}
    per = [(label, totals.get(f"row{i}", 0) / n) for i, label in enumerate(labels)]
    base = per[0][1]
    print(
        f"instructions per call, in-process, {n} calls each (baseline {base / 1e3:.1f} k removed)"
    )
    for label, v in per[1:]:
        print(f"  {(v - base) / 1e3:8.1f} k  {label}")


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "mode", nargs="?", default="servers", choices=["servers", "components", "_inside"]
    )
    p.add_argument("--steps", type=int, default=1000)
    args = p.parse_args()
    if args.mode == "servers":
        servers(args.steps)
    elif args.mode == "components":
        components(args.steps)
    else:
        import uvloop

        uvloop.run(_components(args.steps))


if __name__ == "__main__":
    main()
