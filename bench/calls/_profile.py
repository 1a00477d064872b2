"""Where a server spends its CPU per single-session WS step: py-spy on the real server process.

Starts the server exactly as bench/run.py does, drives it with one `_load.py` WebSocket connection
(the same step frame), samples it with `py-spy record --nonblocking` over the timed window, and
prints CPU µs per step: by layer (the file of the innermost Python frame), by function (self), and
by function (inclusive). Needs py-spy (`.venv/bin/python -m pip install py-spy`).

`--load mcp` drives `/mcp` instead: one MCP client making `tools/call`s (bench/run.py's `mcp1`),
against `mcpgym serve ... --mode production` and the floor's `/mcp`.

Usage: python bench/calls/_profile.py [--server mcpgym|floor] [--load ws|mcp] [--seconds 6] [--rate
997]
       [--top 30]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/

from figures._measure_load import _mcp_spec, _ws_spec

from calls._driver import _readline
from calls._servers import BENCH, Server

_FRAME = re.compile(r"^(?P<fn>.*) \((?P<file>[^():]*)(?::(?P<line>\d+))?\)$")

# Layer of a sample = the first matching marker in the innermost frame's file.
_LAYERS = (
    ("servers/", "mcpgym.servers"),
    ("sdk/", "mcpgym sdk"),
    ("examples/", "mcpgym sdk"),
    ("pydantic", "pydantic"),
    ("/mcp/", "mcp"),
    ("/mcp_types/", "mcp"),
    ("anyio/", "anyio"),
    ("starlette/", "starlette"),
    ("uvicorn/", "uvicorn"),
    ("websockets/", "websockets"),
    ("json/", "json"),
    ("asyncio/", "asyncio"),
    ("_floor.py", "floor app"),
)


def _parse(raw: str) -> list[tuple[list[tuple[str, str]], int]]:
    stacks: list[tuple[list[tuple[str, str]], int]] = []
    for line in raw.splitlines():
        body, _, count = line.rpartition(" ")
        if not body or not count.isdigit():
            continue
        frames: list[tuple[str, str]] = []
        for part in body.split(";"):
            m = _FRAME.match(part.strip())
            frames.append((m["fn"], m["file"]) if m else (part.strip(), ""))
        stacks.append((frames, int(count)))
    return stacks


def _layer(file: str) -> str:
    for marker, name in _LAYERS:
        if marker in file:
            return name
    return "other" if file else "native/idle"


def report(raw: str, steps: int, rate: float, top: int) -> str:
    stacks = _parse(raw)
    us = 1e6 / rate / steps  # one sample, in µs per step
    self_fn: Counter[str] = Counter()
    incl_fn: Counter[str] = Counter()
    layers: Counter[str] = Counter()
    total = 0
    for frames, count in stacks:
        total += count
        fn, file = frames[-1]
        self_fn[f"{fn} ({file})"] += count
        layers[_layer(file)] += count
        for key in {f"{f} ({fl})" for f, fl in frames}:
            incl_fn[key] += count
    out = [f"{steps} steps, {total} samples at {rate:g} Hz = {total * us:.1f} µs CPU per step", ""]
    out.append("by layer (innermost frame), µs/step:")
    out += [f"  {n * us:8.1f}  {name}" for name, n in layers.most_common()]
    out.append("")
    out.append(f"top {top} functions by self time, µs/step:")
    out += [f"  {n * us:8.1f}  {name}" for name, n in self_fn.most_common(top)]
    out.append("")
    out.append(f"top {top} functions by inclusive time, µs/step (frames below the event loop):")
    skip = (
        "<module>",
        "_run_module_as_main",
        "_run_code",
        "main (",
        "_serve (",
        "run (",
        "Runner.run",
    )
    incl = [(k, n) for k, n in incl_fn.most_common() if not k.startswith(skip)]
    out += [f"  {n * us:8.1f}  {name}" for name, n in incl[:top]]
    return "\n".join(out)


def _py_spy() -> str:
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(spy).exists():
        raise SystemExit("py-spy not found: .venv/bin/python -m pip install py-spy")
    return spy


async def profile(
    spy: str, server: str, seconds: float, rate: float, raw_out: Path | None, load: str = "ws"
) -> tuple[str, int]:
    if load == "mcp" and server == "mcpgym":
        server = "mcpgym-production"
    srv = Server(server)
    srv.start()
    tmp = Path(tempfile.mkdtemp())
    raw_path = raw_out or tmp / "raw.txt"
    worker: asyncio.subprocess.Process | None = None
    spy_proc: asyncio.subprocess.Process | None = None
    try:
        secs = int(seconds)
        spec_for = _mcp_spec(1) if load == "mcp" else _ws_spec(1)
        spec = spec_for(srv) | {
            "warmup_s": 1.0, "rewarm_s": 0.2, "duration_s": secs + 1.5, "connect_timeout_s": 15.0,
        }  # fmt: skip
        worker = await asyncio.create_subprocess_exec(
            sys.executable, str(BENCH / "calls" / "_load.py"), json.dumps(spec),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        assert worker.stdin is not None
        if await _readline(worker, 30.0) != "READY":
            raise RuntimeError("load worker not ready")
        worker.stdin.write(b"GO\n")
        await worker.stdin.drain()
        await asyncio.sleep(0.4)  # load running; py-spy samples a window inside the timed one
        spy_proc = await asyncio.create_subprocess_exec(
            spy, "record", "-p", str(srv.pid), "-r", str(int(rate)), "-d", str(secs),
            "-f", "raw", "-o", str(raw_path), "--nonblocking",
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        await asyncio.wait_for(spy_proc.wait(), secs + 20.0)
        await _readline(worker, secs + 15.0)  # DONE
        result = json.loads(await _readline(worker, 10.0))
        worker.stdin.write(b"EXIT\n")
        await worker.stdin.drain()
        # the step rate of the timed window, over py-spy's `secs` seconds of sampling
        steps = int(result["count"] * secs / result["elapsed"])
        return await asyncio.to_thread(raw_path.read_text), steps
    finally:
        for proc in (worker, spy_proc):
            if proc is not None and proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGKILL)
        srv.stop()


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--server", choices=["mcpgym", "floor", "both"], default="both")
    p.add_argument("--load", choices=["ws", "mcp"], default="ws", help="WS steps or /mcp calls")
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--repeat", type=int, default=2, help="alternating runs per server, pooled")
    p.add_argument("--rate", type=float, default=997.0, help="py-spy samples per second")
    p.add_argument("--top", type=int, default=30)
    p.add_argument("--raw", type=Path, help="keep py-spy's pooled collapsed stacks here (prefix)")
    args = p.parse_args()
    spy = _py_spy()
    names = ["floor", "mcpgym"] if args.server == "both" else [args.server]
    pooled: dict[str, tuple[list[str], int]] = {n: ([], 0) for n in names}
    for i in range(args.repeat):
        for name in names if i % 2 == 0 else names[::-1]:
            raw, steps = asyncio.run(profile(spy, name, args.seconds, args.rate, None, args.load))
            raws, total = pooled[name]
            raws.append(raw)
            pooled[name] = (raws, total + steps)
    for name, (raws, steps) in pooled.items():
        text = "\n".join(raws)
        if args.raw:
            Path(f"{args.raw}.{name}.txt").write_text(text)
        what = "/mcp tools/call" if args.load == "mcp" else "WS tool-call steps"
        print(f"== {name}: py-spy, single-session {what}, {len(raws)} run(s) pooled")
        print(report(text, steps, args.rate, args.top))
        print()


if __name__ == "__main__":
    main()
