"""`just bench`: mcpgym's server against a bare Starlette+uvicorn echo floor, in one bounded run.

Both servers run as subprocesses on 127.0.0.1 (free ports) with identical uvicorn settings
(`bench/_floor.py: UVICORN_SETTINGS`), and are driven by identical client code in separate worker
processes (`bench/_load.py`: raw `websockets` and `httpx`, never mcpgym's client). Floor and mcpgym
runs alternate; with several rounds the best of each is kept. Every wait is time-boxed, the run
stops by itself, and every process it started is stopped by PID at the end (also on error or ^C).

Measurements (`--only NAME`, repeatable):
  ws1    single-session WS tool-call steps/s, step latency, server CPU µs per step (target ≥ 0.6x)
  ws100  100-session aggregate WS steps/s
  http   HTTP POST /step requests/s (keep-alive, a few concurrent requests)
  cold   spawn → first 200 from /health (median), idle RSS after start

Adding one (e.g. `/mcp` tools/call at 1 and 50 clients, issue 3): write an
`async def f(b: Bench) -> list[Row]` decorated with `@measurement("mcp1", "...")`.
`b.server("mcpgym")` / `b.server("floor")` start (once) and return the servers;
`b.compare(spec_for, procs)` drives both, alternating, with a `_load.py` spec and returns a
`Comparison` (`.rate(name)` best rate, `.cpu_us(name)` least server CPU per op). For `/mcp`,
add an `"mcp"` kind to `_load.py` (initialize once per connection, then POST `tools/call`
JSON-RPC with `Accept: application/json, text/event-stream`) and point the floor at its `/step`
echo, which decodes and encodes a similar JSON body.

Usage: python bench/run.py [--quick] [--only NAME ...] [--json PATH] [--check]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from _floor import UVICORN_SETTINGS, resolve_auto  # noqa: E402

HOST = "127.0.0.1"
TARGET_WS1 = 0.6  # issue 2: single-session WS steps/s at least 60 % of the floor
CLK_TCK = os.sysconf("SC_CLK_TCK")

# The frames every WS client sends, byte for byte the same to both servers. `n=50` never ends an
# episode unless the secret is 50; a reply with done=true makes the worker reset (uncounted).
RESET_FRAME = json.dumps({"type": "reset", "data": {"seed": 7}})
STEP_FRAME = json.dumps(
    {"type": "step", "data": {"type": "call_tool", "tool_name": "guess", "arguments": {"n": 50}}}
)
# HTTP /step is stateless in mcpgym (fresh instance per request: reset + step).
HTTP_STEP_BODY = json.dumps(
    {
        "action": {"type": "call_tool", "tool_name": "guess", "arguments": {"n": 50}},
        "reset": {"seed": 7},
    }
)


# -- configuration ---------------------------------------------------------------------------------


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
                budget_s=28.0,
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
                budget_s=110.0,
            )
        )
        return cls(**(asdict(base) | {k: v for k, v in over.items() if v is not None}))


# -- servers ---------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def server_command(name: str, port: int) -> list[str]:
    if name == "mcpgym":
        return [
            sys.executable,
            "-m",
            "mcpgym.servers",
            "serve",
            "mcpgym.examples.guess:GuessEnv",
            "--host",
            HOST,
            "--port",
            str(port),
        ]
    if name == "floor":
        return [sys.executable, str(BENCH / "_floor.py"), "--host", HOST, "--port", str(port)]
    raise KeyError(name)


def _health_ok(port: int) -> bool:
    """One raw GET /health (no HTTP client import cost in the timing loop)."""
    try:
        with socket.create_connection((HOST, port), timeout=1.0) as s:
            s.sendall(f"GET /health HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n".encode())
            head = s.recv(64)
    except OSError:
        return False
    return head.startswith(b"HTTP/1.1 200")


class ServerError(RuntimeError):
    pass


class Server:
    """A server subprocess on a free port; knows its start-up time, CPU time and RSS."""

    def __init__(self, name: str, command: list[str] | None = None) -> None:
        """`command` (default: `server_command(name, port)`) may use `{port}` placeholders."""
        self.name = name
        self.port = free_port()
        self.command = [a.replace("{port}", str(self.port)) for a in command or []] or None
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the Server)
        self.startup_s: float | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def url(self, path: str, scheme: str = "http") -> str:
        return f"{scheme}://{HOST}:{self.port}{path}"

    def start(self, timeout_s: float = 20.0) -> float:
        """Spawn and wait for the first 200 from /health; returns seconds from spawn to it."""
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            self.command or server_command(self.name, self.port),
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # ^C in the terminal reaches us, and we stop it by PID
        )
        deadline = t0 + timeout_s
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise ServerError(
                    f"{self.name} server exited with {self.proc.returncode}:\n{self.tail()}"
                )
            if _health_ok(self.port):
                self.startup_s = time.perf_counter() - t0
                return self.startup_s
            time.sleep(0.003)
        raise ServerError(f"{self.name} server not healthy after {timeout_s} s:\n{self.tail()}")

    def stop(self) -> None:
        """SIGTERM by PID, SIGKILL after 6 s (uvicorn's graceful shutdown is 5 s)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=6.0)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=5.0)

    def tail(self, n: int = 2000) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-n:]

    def cpu_s(self) -> float:
        """utime + stime of the server process (all threads), in seconds."""
        stat = Path(f"/proc/{self.pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise ServerError("no VmRSS")

    def native_libs(self) -> str:
        """Which native event loop / HTTP parser the running server really loaded."""
        maps = Path(f"/proc/{self.pid}/maps").read_text()
        libs = [lib for lib in ("uvloop", "httptools") if f"/{lib}/" in maps]
        return "+".join(libs) or "pure asyncio/h11"


# -- load driving ----------------------------------------------------------------------------------


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
        self.specs = [
            spec
            | {
                "conns": total // procs + (1 if i < total % procs else 0),
                "warmup_s": cfg.warmup_s,
                "rewarm_s": cfg.rewarm_s,
                "duration_s": cfg.duration_s,
                "connect_timeout_s": 15.0,
            }
            for i in range(procs)
        ]
        self.workers: list[asyncio.subprocess.Process] = []

    async def start(self) -> None:
        for spec in self.specs:
            self.workers.append(
                await asyncio.create_subprocess_exec(
                    sys.executable,
                    str(BENCH / "_load.py"),
                    json.dumps(spec),
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    start_new_session=True,
                )
            )
        for w in self.workers:  # imports + connect + warm-up
            line = await _readline(w, 20.0 + self.cfg.warmup_s)
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
            line = await _readline(w, self.cfg.rewarm_s + self.cfg.duration_s + 10.0)
            if line != "DONE":
                raise RuntimeError(f"load worker said {line!r}")
        server_cpu = self.server.cpu_s() - cpu0
        results = [json.loads(await _readline(w, 10.0)) for w in self.workers]
        first_error = next((r["first_error"] for r in results if r["first_error"]), None)
        one = results[0] if self.procs == 1 else {}
        return Run(
            server=self.server.name,
            count=sum(r["count"] for r in results),
            elapsed=max(r["elapsed"] for r in results),
            server_cpu_s=server_cpu,
            client_cpu_s=sum(r["client_cpu"] for r in results),
            procs=self.procs,
            errors=sum(r["errors"] for r in results),
            first_error=first_error,
            p50_us=one.get("p50_us"),
            p99_us=one.get("p99_us"),
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


# -- results ---------------------------------------------------------------------------------------


@dataclass
class Row:
    """One figure: mcpgym beside the floor. `ratio` is always mcpgym / floor."""

    key: str
    label: str
    unit: str
    mcpgym: float | None
    floor: float | None
    higher_is_better: bool = True
    target: float | None = None  # minimum ratio (higher is better) or maximum (lower is better)
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.mcpgym is None or not self.floor:
            return None
        return self.mcpgym / self.floor

    @property
    def meets_target(self) -> bool | None:
        r = self.ratio
        if self.target is None or r is None:
            return None
        return r >= self.target if self.higher_is_better else r <= self.target


@dataclass
class Comparison:
    """Every round of both servers. Other load on the machine only ever slows a round down, so
    the best rate and the least CPU per operation are the least disturbed figures."""

    runs: dict[str, list[Run]]

    def best(self, name: str) -> Run:
        return max(self.runs[name], key=lambda r: r.rate)

    def rate(self, name: str) -> float:
        return self.best(name).rate

    def cpu_us(self, name: str) -> float:
        return min(r.server_us_per_op for r in self.runs[name])

    def util(self) -> str:
        """Server CPU use (1 core = 100 %) in the best rounds: near 100 % means server-bound."""
        m, f = self.best("mcpgym").server_util, self.best("floor").server_util
        return f"server busy {m:.0%} / {f:.0%}"

    def saturation(self) -> str:
        """For loads meant to saturate the server: say so when neither server was the limit."""
        m, f = self.best("mcpgym").server_util, self.best("floor").server_util
        if max(m, f) < 0.7:
            return f"{self.util()}: NOT server-bound (client or other load), compare CPU/op"
        return self.util()


@dataclass
class Bench:
    """What a measurement gets: the config, lazily started servers, and `compare`."""

    cfg: Config
    servers: dict[str, Server] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def server(self, name: str) -> Server:
        if name not in self.servers:
            srv = Server(name)
            self.servers[name] = srv  # registered first so that it is stopped even if start fails
            srv.start()
        return self.servers[name]

    async def compare(
        self, spec_for: Callable[[Server], dict[str, Any]], procs: int, rounds: int | None = None
    ) -> Comparison:
        """Alternate floor and mcpgym windows for `rounds` rounds (default `cfg.rounds`)."""
        runs: dict[str, list[Run]] = {"floor": [], "mcpgym": []}
        drivers: dict[str, Driver] = {}
        try:
            for name in runs:
                srv = self.server(name)
                drivers[name] = Driver(srv, spec_for(srv), procs, self.cfg)
                await drivers[name].start()
            for r in range(rounds or self.cfg.rounds):
                for name in ("floor", "mcpgym") if r % 2 == 0 else ("mcpgym", "floor"):
                    run = await drivers[name].window()
                    if run.errors:
                        raise RuntimeError(
                            f"{name}: {run.errors} error replies, first: {run.first_error}"
                        )
                    runs[name].append(run)
        finally:
            for driver in drivers.values():
                await driver.close()
        return Comparison(runs)

    def stop_all(self) -> None:
        for srv in self.servers.values():
            srv.stop()


Measure = Callable[[Bench], Awaitable[list[Row]]]


@dataclass(frozen=True)
class Measurement:
    name: str
    title: str
    fn: Measure


MEASUREMENTS: dict[str, Measurement] = {}


def measurement(name: str, title: str) -> Callable[[Measure], Measure]:
    """Register a measurement under `name` (the `--only` key); runs in registration order."""

    def register(fn: Measure) -> Measure:
        MEASUREMENTS[name] = Measurement(name, title, fn)
        return fn

    return register


# -- the measurements ------------------------------------------------------------------------------


def _ws_spec(conns: int) -> Callable[[Server], dict[str, Any]]:
    return lambda srv: {
        "kind": "ws",
        "url": srv.url("/ws", "ws"),
        "conns": conns,
        "reset_frame": RESET_FRAME,
        "step_frame": STEP_FRAME,
        # No permessage-deflate: measure the framework, not zlib (see the closing notes).
        "compression": None,
    }


@measurement("ws1", "single-session WS tool-call steps")
async def ws1(b: Bench) -> list[Row]:
    # One connection, one client process: a strict request/response ping-pong, so the rate is
    # 1 / (client + loopback + server) time; the server CPU per step isolates the server's share.
    # The headline figure gets two extra rounds.
    c = await b.compare(_ws_spec(1), procs=1, rounds=b.cfg.rounds + (0 if b.cfg.quick else 2))
    m, f = c.best("mcpgym"), c.best("floor")
    return [
        Row("ws1", "WS steps/s, 1 session", "steps/s", m.rate, f.rate, target=TARGET_WS1),
        Row(
            "ws1_p50",
            "WS round trip p50, 1 session",
            "µs",
            m.p50_us,
            f.p50_us,
            False,
            note=f"p99 {_fmt(m.p99_us, 'µs')} / {_fmt(f.p99_us, 'µs')} µs",
        ),
        Row(
            "cpu_per_step",
            "server CPU per WS step, 1 session",
            "µs",
            c.cpu_us("mcpgym"),
            c.cpu_us("floor"),
            False,
            note=c.util() + " of a core",
        ),
    ]


@measurement("ws100", "100-session aggregate WS steps")
async def ws100(b: Bench) -> list[Row]:
    # Why 2 client processes: one asyncio process driving 100 connections with `websockets`
    # spends about as much CPU per round trip (~120 µs here) as the floor server does, so with
    # one client process the floor figure is the client's limit, not the floor's (measured: 1 proc
    # floor 1.7k steps/s, 2 procs 3.0k; mcpgym unchanged). Two processes x 50 connections give
    # both servers the same, less limiting client; the note shows how busy each server was.
    n = b.cfg.agg_conns
    c = await b.compare(_ws_spec(n), procs=b.cfg.agg_procs)
    return [
        Row(
            "ws100",
            f"WS steps/s, {n} sessions (aggregate)",
            "steps/s",
            c.rate("mcpgym"),
            c.rate("floor"),
            note=f"{c.saturation()}; {b.cfg.agg_procs} client procs",
        ),
        Row(
            "ws100_cpu",
            f"server CPU per WS step, {n} sessions",
            "µs",
            c.cpu_us("mcpgym"),
            c.cpu_us("floor"),
            False,
        ),
    ]


@measurement("http", "HTTP POST /step requests")
async def http(b: Bench) -> list[Row]:
    # httpx spends more client CPU per request (~1.5 ms here) than either server, so this rate is
    # client-bound (see the server-busy note) and 2 client processes share the load, as in ws100.
    # The server CPU per request is the figure that compares the servers.
    def spec(srv: Server) -> dict[str, Any]:
        return {
            "kind": "http",
            "url": srv.url("/step"),
            "conns": b.cfg.http_conns,
            "body": HTTP_STEP_BODY,
        }

    c = await b.compare(spec, procs=b.cfg.http_procs)
    return [
        Row(
            "http",
            f"HTTP /step req/s ({b.cfg.http_conns} concurrent)",
            "req/s",
            c.rate("mcpgym"),
            c.rate("floor"),
            note=c.saturation(),
        ),
        Row(
            "http_cpu",
            "server CPU per HTTP /step",
            "µs",
            c.cpu_us("mcpgym"),
            c.cpu_us("floor"),
            False,
            note="mcpgym: fresh env, reset + step per request",
        ),
    ]


@measurement("cold", "cold start and idle memory")
async def cold(b: Bench) -> list[Row]:
    # Fresh processes (not the ones the throughput runs use), alternating floor and mcpgym.
    starts: dict[str, list[float]] = {"floor": [], "mcpgym": []}
    rss: dict[str, list[float]] = {"floor": [], "mcpgym": []}
    for _ in range(b.cfg.cold_runs):
        for name in ("floor", "mcpgym"):
            srv = Server(name)
            try:
                starts[name].append(srv.start() * 1e3)  # blocking on purpose: nothing else runs
                await asyncio.sleep(0.3)  # let start-up settle before reading the idle RSS
                rss[name].append(srv.rss_mb())
            finally:
                srv.stop()
    med = {k: statistics.median(v) for k, v in starts.items()}
    mem = {k: statistics.median(v) for k, v in rss.items()}
    n = b.cfg.cold_runs
    return [
        Row(
            "cold_ms",
            f"cold start → /health 200 (median of {n})",
            "ms",
            med["mcpgym"],
            med["floor"],
            False,
        ),
        Row("rss_mb", "idle server RSS after start", "MB", mem["mcpgym"], mem["floor"], False),
    ]


# -- output ----------------------------------------------------------------------------------------


def _fmt(v: float | None, unit: str) -> str:
    if v is None or v != v:
        return "—"
    if unit in ("steps/s", "req/s"):
        return f"{v:,.0f}"
    return f"{v:,.1f}" if v < 1000 else f"{v:,.0f}"


def render(rows: list[Row], meta: dict[str, Any], errors: dict[str, str]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 140)
    table = Table(title="mcpgym vs bare Starlette+uvicorn floor", title_justify="left")
    table.add_column("figure")
    table.add_column("unit")
    table.add_column("mcpgym", justify="right")
    table.add_column("floor", justify="right")
    table.add_column("ratio", justify="right")
    table.add_column("target", justify="right")
    table.add_column("note", overflow="fold")
    for row in rows:
        r = row.ratio
        ratio = "—" if r is None else f"{r:.2f}x"
        target = ""
        if row.target is not None:
            sign = "≥" if row.higher_is_better else "≤"
            ok = row.meets_target
            mark = "" if ok is None else (" [green]✓[/]" if ok else " [red]✗[/]")
            target = f"{sign} {row.target:.2f}x{mark}"
        arrow = "↑" if row.higher_is_better else "↓"
        table.add_row(
            f"{row.label} {arrow}",
            row.unit,
            _fmt(row.mcpgym, row.unit),
            _fmt(row.floor, row.unit),
            ratio,
            target,
            row.note,
        )
    console.print(table)
    busy = meta["machine_busy_before"]
    if busy > 0.25:
        console.print(
            f"[yellow]warning: the machine was {busy:.0%} busy before the run started (other "
            "processes); throughput figures are noisy. Ratios from alternating rounds and the CPU "
            "per step figures hold up better.[/]"
        )
    for name, err in errors.items():
        console.print(f"[red]{name} failed:[/] {err}")
    console.print(
        f"[dim]ratio = mcpgym / floor (↑ higher is better, ↓ lower). uvicorn: {meta['uvicorn']}; "
        f"servers loaded: {meta['server_native_libs']}; {meta['cpus']} CPUs; "
        f"{meta['duration_s']} s windows x {meta['rounds']} round(s); "
        f"took {meta['elapsed_s']:.1f} s {meta['timings_s']}; machine {busy:.0%} busy before[/]"
    )


# -- main ------------------------------------------------------------------------------------------


def machine_busy(seconds: float = 0.5) -> float:
    """Fraction of all CPUs busy over `seconds` before we start anything (other users' load)."""

    def sample() -> tuple[int, int]:
        values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = values[3] + values[4]  # idle + iowait
        return sum(values) - idle, sum(values)

    busy0, total0 = sample()
    time.sleep(seconds)
    busy1, total1 = sample()
    return (busy1 - busy0) / max(1, total1 - total0)


async def run(cfg: Config, names: list[str]) -> tuple[list[Row], dict[str, str], Bench]:
    bench = Bench(cfg)
    rows: list[Row] = []
    errors: dict[str, str] = {}
    try:
        for name in names:
            t0 = time.perf_counter()
            try:
                rows += await MEASUREMENTS[name].fn(bench)
            except (ServerError, RuntimeError, OSError, TimeoutError) as exc:
                errors[name] = f"{type(exc).__name__}: {exc}"
            bench.timings[name] = round(time.perf_counter() - t0, 1)
        for srv in bench.servers.values():
            if srv.proc is not None and srv.proc.poll() is None:
                bench.notes.append(f"{srv.name}: {srv.native_libs()}")
    finally:
        bench.stop_all()  # synchronous: must not be skipped by a second cancellation
    return rows, errors, bench


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true", help="short windows, one round (smoke test)")
    p.add_argument(
        "--only",
        action="append",
        choices=list(MEASUREMENTS),
        metavar="NAME",
        help=f"run only this measurement (repeatable): {', '.join(MEASUREMENTS)}",
    )
    p.add_argument("--json", type=Path, metavar="PATH", help="also write the figures as JSON")
    p.add_argument("--duration", type=float, help="seconds per timed window (overrides the preset)")
    p.add_argument("--rounds", type=int, help="alternating rounds per comparison (best one kept)")
    p.add_argument("--procs", type=int, help="client processes for the ws100 and http loads")
    p.add_argument(
        "--check", action="store_true", help=f"exit 1 if ws1 is below {TARGET_WS1}x the floor"
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cfg = Config.make(
        args.quick,
        duration_s=args.duration,
        rounds=args.rounds,
        agg_procs=args.procs,
        http_procs=args.procs,
    )
    names = args.only or list(MEASUREMENTS)
    auto = resolve_auto()
    pinned = {k: UVICORN_SETTINGS[k] for k in auto}
    if auto != pinned:  # `mcpgym serve` uses uvicorn's auto choices; the floor pins them
        print(f"warning: uvicorn auto resolves to {auto}, floor pins {pinned}", file=sys.stderr)
    t0 = time.perf_counter()
    busy = machine_busy()
    try:
        rows, errors, bench = asyncio.run(asyncio.wait_for(run(cfg, names), cfg.budget_s))
    except TimeoutError:
        print(f"bench: over its {cfg.budget_s:.0f} s budget; stopped", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("bench: interrupted; servers stopped", file=sys.stderr)
        return 130
    meta = {
        "uvicorn": ", ".join(f"{k}={pinned[k]}" for k in pinned) + f" (auto: {auto == pinned})",
        "server_native_libs": "; ".join(bench.notes) or "—",
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "duration_s": cfg.duration_s,
        "rounds": cfg.rounds,
        "quick": cfg.quick,
        "elapsed_s": time.perf_counter() - t0,
        "timings_s": bench.timings,
        "machine_busy_before": busy,
    }
    render(rows, meta, errors)
    if args.json:
        figures = {
            r.key: {
                "label": r.label,
                "unit": r.unit,
                "mcpgym": r.mcpgym,
                "floor": r.floor,
                "ratio": r.ratio,
                "higher_is_better": r.higher_is_better,
                "target": r.target,
                "meets_target": r.meets_target,
                "note": r.note,
            }
            for r in rows
        }
        args.json.write_text(
            json.dumps({"meta": meta, "figures": figures, "errors": errors}, indent=2)
        )
    if errors:
        return 1
    if args.check:
        ws = next((r for r in rows if r.key == "ws1"), None)
        if ws is not None and ws.meets_target is False:
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
