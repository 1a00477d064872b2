"""Code Gym: 64 concurrent sessions each running a CPU-bound snippet; a bystander's latency.

Starts `mcpgym serve code_gym:CodeEnv` on a free 127.0.0.1 port (a subprocess, stopped by PID at
the end), opens `--sessions` WebSocket sessions (raw `websockets`, not mcpgym's client), and has
each call `run_python` with a snippet that burns `--burn` CPU seconds. Meanwhile a bystander
session times `GET /health` and a trivial tool call (`list_files`) every 20 ms. Prints p50/p99
of both, the busy sessions' run durations, and after every session closed, how many sandbox
processes (bwrap) the server still has (must be 0). Bounded by `--deadline` seconds.

    python bench/code_sessions.py [--sessions 64] [--burn 2] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
import websockets

HOST = "127.0.0.1"


def _port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _descendants(pid: int) -> list[tuple[int, str]]:
    """Every live descendant of `pid` (pid, command) from /proc."""
    children: dict[int, list[int]] = {}
    names: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            names[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if state != "Z":
            children.setdefault(int(ppid), []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append((child, names.get(child, "")))
            todo.append(child)
    return out


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def _call(ws, tool: str, args: dict, ident: int) -> dict:  # type: ignore[no-untyped-def]
    frame = {
        "type": "step",
        "id": ident,
        "data": {"type": "call_tool", "tool_name": tool, "arguments": args},
    }
    await ws.send(json.dumps(frame))
    return json.loads(await ws.recv())


async def _session(url: str, code: str | None, out: list[float]) -> None:
    async with websockets.connect(url, max_size=2**24, open_timeout=60) as ws:
        await ws.send(json.dumps({"type": "reset", "data": {}}))
        json.loads(await ws.recv())
        if code is not None:
            start = time.monotonic()
            reply = await _call(ws, "run_python", {"code": code}, 1)
            out.append(time.monotonic() - start)
            obs = reply["data"]["observation"]
            assert obs.get("error") is None and obs["result"]["exit_code"] == 0, reply


async def _bystander(
    base: str,
    url: str,
    stop: asyncio.Event,
    warm: asyncio.Event,
    health: list[float],
    trivial: list[float],
) -> None:
    async with (
        httpx.AsyncClient(base_url=base, timeout=30) as http,
        websockets.connect(url, open_timeout=60) as ws,
    ):
        await ws.send(json.dumps({"type": "reset", "data": {}}))
        await ws.recv()
        await _call(ws, "list_files", {}, 0)  # its sandbox exists before the load starts
        n = 1
        while not stop.is_set():
            t = time.monotonic()
            assert (await http.get("/health")).status_code == 200
            health.append(time.monotonic() - t)
            t = time.monotonic()
            await _call(ws, "list_files", {}, n)
            trivial.append(time.monotonic() - t)
            if len(trivial) >= 20:
                warm.set()
            n += 1
            await asyncio.sleep(0.02)


async def _run(args: argparse.Namespace, port: int) -> dict:  # type: ignore[type-arg]
    base, url = f"http://{HOST}:{port}", f"ws://{HOST}:{port}/ws"
    code = (
        "import time\nt = time.process_time()\n"
        f"while time.process_time() - t < {args.burn}:\n    pass\n"
    )
    health: list[float] = []
    trivial: list[float] = []
    runs: list[float] = []
    stop, warm = asyncio.Event(), asyncio.Event()
    watcher = asyncio.create_task(_bystander(base, url, stop, warm, health, trivial))
    await asyncio.wait_for(warm.wait(), timeout=60)  # a quiet baseline first
    quiet = len(trivial)
    start = time.monotonic()
    await asyncio.wait_for(
        asyncio.gather(*(_session(url, code, runs) for _ in range(args.sessions))),
        timeout=args.deadline,
    )
    busy = time.monotonic() - start
    stop.set()
    await watcher
    loaded_h, loaded_t = health[quiet:], trivial[quiet:]
    return {
        "sessions": args.sessions,
        "burn_cpu_s": args.burn,
        "cores": os.cpu_count(),
        "busy_wall_s": round(busy, 2),
        "run_p50_s": round(statistics.median(runs), 2),
        "run_max_s": round(max(runs), 2),
        "health_p50_ms": round(1000 * _pct(loaded_h, 0.5), 1),
        "health_p99_ms": round(1000 * _pct(loaded_h, 0.99), 1),
        "trivial_p50_ms": round(1000 * _pct(loaded_t, 0.5), 1),
        "trivial_p99_ms": round(1000 * _pct(loaded_t, 0.99), 1),
        "bystander_samples": len(loaded_t),
        "quiet_trivial_p50_ms": round(1000 * _pct(trivial[:quiet], 0.5), 1),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sessions", type=int, default=64)
    p.add_argument("--burn", type=float, default=2.0, help="CPU seconds per snippet")
    p.add_argument("--deadline", type=float, default=300.0)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    port = _port()
    cmd = [
        sys.executable,
        "-m",
        "mcpgym.servers",
        "serve",
        "code_gym:CodeEnv",
        "--host",
        HOST,
        "--port",
        str(port),
        "--max-sessions",
        str(args.sessions + 8),
    ]
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://{HOST}:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("the server did not start")
            time.sleep(0.1)
        figures = asyncio.run(_run(args, port))
        left = deadline = time.monotonic() + 10
        while True:  # sessions are closed: their sandboxes must go
            left = [c for _, c in _descendants(server.pid) if "bwrap" in c]
            if not left or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        figures["sandboxes_left"] = len(left)
        figures["load_after"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    if args.json:
        print(json.dumps(figures))
    else:
        print(
            f"Code Gym: {figures['sessions']} sessions x {figures['burn_cpu_s']} CPU s on "
            f"{figures['cores']} cores: busy {figures['busy_wall_s']} s, run p50 "
            f"{figures['run_p50_s']} s, max {figures['run_max_s']} s"
        )
        print(
            f"  bystander /health p50 {figures['health_p50_ms']} ms, p99 "
            f"{figures['health_p99_ms']} ms; list_files p50 {figures['trivial_p50_ms']} ms, "
            f"p99 {figures['trivial_p99_ms']} ms ({figures['bystander_samples']} samples; "
            f"quiet p50 {figures['quiet_trivial_p50_ms']} ms)"
        )
        print(
            f"  sandbox processes left after the sessions closed: {figures['sandboxes_left']}; "
            f"load average {figures['load_after']}"
        )
    return 0 if figures["sandboxes_left"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
