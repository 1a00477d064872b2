"""bench/run.py's run presets (`Config`) and load driving: `_load.py` client worker processes.

A `Driver` starts the workers for one server and one spec, and times one window at a time
(`Run`: count, elapsed, server and client CPU).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from dataclasses import asdict, dataclass
from typing import Any

from calls._servers import BENCH, Server


@dataclass(frozen=True)
class Config:
    quick: bool
    warmup_s: float
    rewarm_s: float
    duration_s: float
    rounds: int
    cold_runs: int
    agg_conns: int
    agg_procs: int
    http_conns: int
    http_procs: int
    mcp_conns: int
    mcp_procs: int
    budget_s: float

    @classmethod
    def make(cls, quick: bool, **over: Any) -> Config:
        base = (
            cls(
                quick=True,
                warmup_s=0.3,
                rewarm_s=0.1,
                duration_s=1.0,
                rounds=1,
                cold_runs=1,
                agg_conns=100,
                agg_procs=2,
                http_conns=4,
                http_procs=2,
                mcp_conns=50,
                mcp_procs=2,
                budget_s=45.0,
            )
            if quick
            else cls(
                quick=False,
                warmup_s=0.5,
                rewarm_s=0.2,
                duration_s=2.0,
                rounds=3,
                cold_runs=3,
                agg_conns=100,
                agg_procs=2,
                http_conns=4,
                http_procs=2,
                mcp_conns=50,
                mcp_procs=2,
                budget_s=110.0,
            )
        )
        return cls(**(asdict(base) | {k: v for k, v in over.items() if v is not None}))


@dataclass
class Run:
    """One timed window against one server (all worker processes together)."""

    server: str
    count: int
    elapsed: float
    server_cpu_s: float
    client_cpu_s: float
    procs: int
    errors: int = 0
    first_error: str | None = None
    p50_us: float | None = None
    p99_us: float | None = None

    @property
    def rate(self) -> float:
        return self.count / self.elapsed if self.elapsed else 0.0

    @property
    def server_us_per_op(self) -> float:
        return self.server_cpu_s / self.count * 1e6 if self.count else float("nan")

    @property
    def server_util(self) -> float:
        return self.server_cpu_s / self.elapsed if self.elapsed else 0.0

    @property
    def client_util(self) -> float:
        """Mean CPU use of one client worker process (1.0 = one core busy)."""
        return self.client_cpu_s / self.elapsed / self.procs if self.elapsed else 0.0


async def _readline(proc: asyncio.subprocess.Process, limit_s: float) -> str:
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), limit_s)
    if not line:
        err = b""
        if proc.stderr is not None:
            with contextlib.suppress(TimeoutError):
                err = await asyncio.wait_for(proc.stderr.read(), 2.0)
        raise RuntimeError(f"load worker ended early: {err.decode(errors='replace')[-1500:]}")
    return line.decode().strip()


def _kill(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)


class Driver:
    """Client worker processes driving one server with one spec (conns split between them).

    They connect and warm up once, then `window()` times one window at a time; between windows
    they pause, so alternating windows of two drivers never load the machine together.
    """

    def __init__(self, server: Server, spec: dict[str, Any], procs: int, cfg: Config) -> None:
        self.server = server
        self.cfg = cfg
        self.procs = procs
        total = spec["conns"]
        # the config's windows unless the spec sets its own (the session sweep lengthens them
        # with K); each worker reads the server's CPU at the edges of its counted window
        timing = {
            "warmup_s": cfg.warmup_s,
            "rewarm_s": cfg.rewarm_s,
            "duration_s": cfg.duration_s,
            "connect_timeout_s": 15.0,
        }
        self.specs = [
            timing
            | spec
            | {"conns": total // procs + (1 if i < total % procs else 0), "server_pid": server.pid}
            for i in range(procs)
        ]
        self.window_s = self.specs[0]["rewarm_s"] + self.specs[0]["duration_s"]
        self.workers: list[asyncio.subprocess.Process] = []

    async def start(self) -> None:
        for spec in self.specs:
            self.workers.append(
                await asyncio.create_subprocess_exec(
                    sys.executable,
                    str(BENCH / "calls" / "_load.py"),
                    json.dumps(spec),
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    start_new_session=True,
                )
            )
        for w in self.workers:  # imports + connect + warm-up
            line = await _readline(w, 20.0 + self.specs[0]["warmup_s"])
            if line != "READY":
                raise RuntimeError(f"load worker said {line!r}")

    async def _send(self, line: str) -> None:
        for w in self.workers:
            assert w.stdin is not None
            w.stdin.write(line.encode() + b"\n")
            await w.stdin.drain()

    async def window(self) -> Run:
        """One timed window; the server's CPU is sampled at GO and when every worker is DONE."""
        cpu0 = self.server.cpu_s()
        await self._send("GO")
        for w in self.workers:
            line = await _readline(w, self.window_s + 10.0)
            if line != "DONE":
                raise RuntimeError(f"load worker said {line!r}")
        server_cpu = self.server.cpu_s() - cpu0
        results = [json.loads(await _readline(w, 10.0)) for w in self.workers]
        elapsed = max(r["elapsed"] for r in results)
        inside = [r["server_cpu"] / r["elapsed"] for r in results if "server_cpu" in r]
        if inside:  # the server's CPU rate over the counted windows, times their length
            server_cpu = sum(inside) / len(inside) * elapsed
        first_error = next((r["first_error"] for r in results if r["first_error"]), None)
        # With several workers, the slowest worker's percentiles stand for the run (each worker
        # sees the same server; taking the worst never flatters it).
        p50s = [r["p50_us"] for r in results if r.get("p50_us") is not None]
        p99s = [r["p99_us"] for r in results if r.get("p99_us") is not None]
        return Run(
            server=self.server.name,
            count=sum(r["count"] for r in results),
            elapsed=elapsed,
            server_cpu_s=server_cpu,
            client_cpu_s=sum(r["client_cpu"] for r in results),
            procs=self.procs,
            errors=sum(r["errors"] for r in results),
            first_error=first_error,
            p50_us=max(p50s) if p50s else None,
            p99_us=max(p99s) if p99s else None,
        )

    async def close(self) -> None:
        with contextlib.suppress(OSError, RuntimeError):
            await self._send("EXIT")
        for w in self.workers:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(w.wait(), 5.0)
            _kill(w)


async def drive(server: Server, spec: dict[str, Any], procs: int, cfg: Config) -> Run:
    """One window of `spec` against `server` (start workers, measure, stop them)."""
    driver = Driver(server, spec, procs, cfg)
    try:
        await driver.start()
        return await driver.window()
    finally:
        await driver.close()
