"""`just bench`: mcpgym's server against a bare Starlette+uvicorn echo floor, in one bounded run.

Both servers run as subprocesses on 127.0.0.1 (free ports) with identical uvicorn settings
(`bench/_floor.py: UVICORN_SETTINGS`), and are driven by identical client code in separate worker
processes (`bench/_load.py`: raw `websockets` and `httpx`, never mcpgym's client). Floor and mcpgym
runs alternate; with several rounds the best of each is kept. Every wait is time-boxed, the run
stops by itself, and every process it started is stopped by PID at the end (also on error or ^C).

Measurements (`--only NAME`, repeatable):
  ws1       single-session WS tool-call steps/s, step latency, server CPU µs per step
            (target ≥ 0.6x)
  ws100     100-session aggregate WS steps/s
  http      HTTP POST /step requests/s (keep-alive, a few concurrent requests)
  mcp1      `/mcp` tools/call calls/s, 1 MCP client (2025-11-25 session, JSON responses),
            `mcpgym serve ... --mode production` against the floor's `/mcp` JSON-RPC echo
  mcp50     the same with 50 concurrent MCP clients (one session and connection each)
  cold      spawn → first 200 from /health (median) and idle RSS after start, simulation and
            production mode (targets ≤ 1 s, ≤ 60 MB)
  calendar  Calendar Gym in-process (bench/calendar_bench.py): session reset p50 (target
            ≤ 5 ms) and the call-path overhead of a typical `events_list`

Adding one: write an `async def f(b: Bench) -> list[Row]` decorated with
`@measurement("name", "...")`. `b.server(name)` starts (once) and returns a server of
`server_command` ("floor", "mcpgym", "mcpgym-production"); `b.compare(spec_for, procs)` drives
the floor and an mcpgym server (`mcpgym=`), alternating, with a `_load.py` spec and returns a
`Comparison` (`.rate(role)` best rate, `.cpu_us(role)` least server CPU per op; roles "floor"
and "mcpgym"). A `Row` holds a figure beside the floor (`target`: a ratio) or alone (`limit`: an
absolute bound on the mcpgym figure).

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
LIMIT_COLD_MS = 1000.0  # cold start → first /health 200, either mode
LIMIT_RSS_MB = 60.0  # idle RSS after start, either mode
LIMIT_CALENDAR_RESET_MS = 5.0  # issue 4: Calendar Gym session reset p50
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
# `/mcp` tools/call params (production mode: one long-lived GuessEnv serves every session).
MCP_CALL = {"name": "guess", "arguments": {"n": 50}}


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


# -- servers ---------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


SERVER_NAMES = ("floor", "mcpgym", "mcpgym-production")


def server_command(name: str, port: int) -> list[str]:
    """How each server is started: the floor, and `mcpgym serve` in either mode."""
    if name in ("mcpgym", "mcpgym-production"):
        mode = ["--mode", "production"] if name == "mcpgym-production" else []
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
            *mode,
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
    """One figure: mcpgym beside the floor (`ratio` is always mcpgym / floor), or alone.

    `target` bounds the ratio, `limit` the mcpgym figure itself (in `unit`): a minimum when
    higher is better, else a maximum.
    """

    key: str
    label: str
    unit: str
    mcpgym: float | None
    floor: float | None
    higher_is_better: bool = True
    target: float | None = None  # minimum ratio (higher is better) or maximum (lower is better)
    note: str = ""
    limit: float | None = None  # minimum or maximum of `mcpgym`, in `unit`

    @property
    def ratio(self) -> float | None:
        if self.mcpgym is None or not self.floor:
            return None
        return self.mcpgym / self.floor

    def _within(self, value: float | None, bound: float | None) -> bool | None:
        if bound is None or value is None:
            return None
        return value >= bound if self.higher_is_better else value <= bound

    @property
    def meets_target(self) -> bool | None:
        """Whether the ratio target and the absolute limit hold (`None`: nothing to check)."""
        checks = [
            c
            for c in (self._within(self.ratio, self.target), self._within(self.mcpgym, self.limit))
            if c is not None
        ]
        return all(checks) if checks else None


@dataclass
class Comparison:
    """Every round of both servers. Other load on the machine only ever slows a round down, so
    the best rate and the least CPU per operation are the least disturbed figures."""

    runs: dict[str, list[Run]]
    servers: dict[str, str] = field(default_factory=dict)  # role → server name

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
        self,
        spec_for: Callable[[Server], dict[str, Any]],
        procs: int,
        rounds: int | None = None,
        mcpgym: str = "mcpgym",
    ) -> Comparison:
        """Alternate floor and mcpgym windows for `rounds` rounds (default `cfg.rounds`).

        `mcpgym` names the server in the mcpgym role (e.g. "mcpgym-production"); the result's
        runs are keyed by role, "floor" and "mcpgym".
        """
        roles = {"floor": "floor", "mcpgym": mcpgym}
        runs: dict[str, list[Run]] = {"floor": [], "mcpgym": []}
        drivers: dict[str, Driver] = {}
        try:
            for role, name in roles.items():
                srv = self.server(name)
                drivers[role] = Driver(srv, spec_for(srv), procs, self.cfg)
                await drivers[role].start()
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
        return Comparison(runs, roles)

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


def _mcp_spec(conns: int) -> Callable[[Server], dict[str, Any]]:
    return lambda srv: {"kind": "mcp", "url": srv.url("/mcp"), "conns": conns, "call": MCP_CALL}


_MCP_NOTE = "mcpgym --mode production; JSON responses, 2025-11-25 sessions, raw HTTP/1.1"


def _mcp_rounds(b: Bench) -> int:
    # mcpgym's /mcp is several times the floor's cost, far above the round-to-round noise:
    # two rounds (one in each order) keep `just bench` within its two minutes.
    return min(b.cfg.rounds, 2)


@measurement("mcp1", "/mcp tools/call, 1 client")
async def mcp1(b: Bench) -> list[Row]:
    # As ws1: a strict request/response ping-pong on one keep-alive connection and session.
    c = await b.compare(_mcp_spec(1), procs=1, rounds=_mcp_rounds(b), mcpgym="mcpgym-production")
    m, f = c.best("mcpgym"), c.best("floor")
    return [
        Row("mcp1", "/mcp tools/call/s, 1 client", "calls/s", m.rate, f.rate, note=_MCP_NOTE),
        Row(
            "mcp1_p50",
            "/mcp call round trip p50, 1 client",
            "µs",
            m.p50_us,
            f.p50_us,
            False,
            note=f"p99 {_fmt(m.p99_us, 'µs')} / {_fmt(f.p99_us, 'µs')} µs",
        ),
        Row(
            "mcp1_cpu",
            "server CPU per /mcp call, 1 client",
            "µs",
            c.cpu_us("mcpgym"),
            c.cpu_us("floor"),
            False,
            note=c.util() + " of a core",
        ),
    ]


@measurement("mcp50", "/mcp tools/call, 50 concurrent clients")
async def mcp50(b: Bench) -> list[Row]:
    # Two client processes, as in ws100, so that the client is not the floor's limit.
    n = b.cfg.mcp_conns
    c = await b.compare(
        _mcp_spec(n), procs=b.cfg.mcp_procs, rounds=_mcp_rounds(b), mcpgym="mcpgym-production"
    )
    return [
        Row(
            "mcp50",
            f"/mcp tools/call/s, {n} clients",
            "calls/s",
            c.rate("mcpgym"),
            c.rate("floor"),
            note=f"aggregate; {c.saturation()}; {b.cfg.mcp_procs} client procs",
        ),
        Row(
            "mcp50_cpu",
            f"server CPU per /mcp call, {n} clients",
            "µs",
            c.cpu_us("mcpgym"),
            c.cpu_us("floor"),
            False,
        ),
    ]


_IMPORT_COST = """
import resource, sys, time
t = time.perf_counter()
for name in sys.argv[1:]:
    __import__(name)
took = time.perf_counter() - t
print(took * 1e3, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def import_cost(*modules: str) -> tuple[float, float]:
    """(ms, peak MB) of importing `modules` in a fresh interpreter (a reference for cold start)."""
    out = subprocess.run(
        [sys.executable, "-c", _IMPORT_COST, *modules],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout.split()
    return float(out[0]), float(out[1])


@measurement("cold", "cold start and idle memory")
async def cold(b: Bench) -> list[Row]:
    # Fresh processes (not the ones the throughput runs use), alternating the three servers.
    starts: dict[str, list[float]] = {name: [] for name in SERVER_NAMES}
    rss: dict[str, list[float]] = {name: [] for name in SERVER_NAMES}
    for _ in range(b.cfg.cold_runs):
        for name in SERVER_NAMES:
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
    # What production cannot avoid: the `mcp` package (and pydantic, which mcpgym needs anyway).
    mcp_ms, mcp_mb = await asyncio.to_thread(
        import_cost, "pydantic", "mcp.server.lowlevel", "mcp.server.streamable_http_manager"
    )
    mcp_ref = f"`import mcp` alone (with pydantic): {mcp_ms:,.0f} ms, {mcp_mb:.0f} MB"
    notes = {
        "cold_ms": f"spawn → first /health 200, median of {n}",
        "cold_ms_prod": f"median of {n}; {mcp_ref}",
        "rss_mb": "",
        "rss_mb_prod": "imports `mcp` at start-up (by design)",
    }
    rows: list[Row] = []
    for name, mode in (("mcpgym", "simulation"), ("mcpgym-production", "production")):
        suffix = "" if mode == "simulation" else "_prod"
        rows += [
            Row(
                f"cold_ms{suffix}",
                f"cold start, {mode}",
                "ms",
                med[name],
                med["floor"],
                False,
                limit=LIMIT_COLD_MS,
                note=notes[f"cold_ms{suffix}"],
            ),
            Row(
                f"rss_mb{suffix}",
                f"idle RSS after start, {mode}",
                "MB",
                mem[name],
                mem["floor"],
                False,
                limit=LIMIT_RSS_MB,
                note=notes[f"rss_mb{suffix}"],
            ),
        ]
    return rows


@measurement("calendar", "Calendar Gym reset and events_list (in-process)")
async def calendar(b: Bench) -> list[Row]:
    # In its own process (bench/calendar_bench.py --json), so that neither the runner nor the
    # servers carry Calendar Gym; no floor: these are absolute figures.
    resets, calls = (100, 200) if b.cfg.quick else (300, 600)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(BENCH / "calendar_bench.py"),
        "--json",
        "--resets",
        str(resets),
        "--calls",
        str(calls),
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 30.0)
    finally:
        _kill(proc)
    if not out.strip():
        raise RuntimeError(f"calendar_bench.py exited {proc.returncode}: {err.decode()[-1500:]}")
    data = json.loads(out)
    reset, listing = data["reset_ms"], data["events_list"]
    astep, body = listing["astep_us"], listing["tool_body_us"]
    parts = listing.get("overhead_parts_us", {})
    split = ", ".join(f"{k} {v:,.0f}" for k, v in parts.items())
    return [
        Row(
            "calendar_reset_ms",
            "Calendar Gym session reset p50",
            "ms",
            reset["p50"],
            None,
            False,
            limit=LIMIT_CALENDAR_RESET_MS,
            note=f"p95 {reset['p95']:.2f} ms; {resets} resets",
        ),
        Row(
            "calendar_events_list_us",
            "Calendar events_list astep p50",
            "µs",
            astep["p50"],
            None,
            False,
            note=f"p95 {astep['p95']:,.0f} µs; tool body alone p50 {body['p50']:,.0f} µs; "
            f"{listing['items']} items, one week, singleEvents",
        ),
        Row(
            "calendar_events_list_overhead_us",
            "Calendar events_list overhead p50",
            "µs",
            listing["overhead_p50_us"],
            None,
            False,
            note=f"astep minus tool body, paired; {split}" if split else "astep minus tool body",
        ),
    ]


# -- output ----------------------------------------------------------------------------------------


def _fmt(v: float | None, unit: str) -> str:
    if v is None or v != v:
        return "—"
    if unit in ("steps/s", "req/s", "calls/s"):
        return f"{v:,.0f}"
    if unit == "ms" and v < 10:
        return f"{v:,.2f}"
    return f"{v:,.1f}" if v < 1000 else f"{v:,.0f}"


def _target(row: Row) -> str:
    sign = "≥" if row.higher_is_better else "≤"
    parts = []
    if row.target is not None:
        parts.append(f"{sign} {row.target:.2f}x")
    if row.limit is not None:
        parts.append(f"{sign} {_fmt(row.limit, row.unit)} {row.unit}")
    ok = row.meets_target
    mark = "" if ok is None else (" [green]✓[/]" if ok else " [red]✗[/]")
    return "; ".join(parts) + mark


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
        target = _target(row)
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
        f"[dim]ratio = mcpgym / floor (↑ higher is better, ↓ lower); target: on the ratio (x) or "
        f"on the mcpgym figure (unit). uvicorn: {meta['uvicorn']}; "
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
    """Run the measurements in order within `cfg.budget_s`: one that would overrun it is stopped
    (its servers and workers too) and the later ones are skipped, so the figures measured so far
    are still printed."""
    bench = Bench(cfg)
    rows: list[Row] = []
    errors: dict[str, str] = {}
    deadline = time.perf_counter() + cfg.budget_s
    try:
        for name in names:
            t0 = time.perf_counter()
            if deadline - t0 < 1.0:
                errors[name] = f"skipped: the run's {cfg.budget_s:.0f} s budget is spent"
                continue
            task = asyncio.ensure_future(MEASUREMENTS[name].fn(bench))
            try:
                rows += await asyncio.wait_for(task, deadline - t0)
            except (ServerError, RuntimeError, OSError, TimeoutError) as exc:
                if task.cancelled():
                    errors[name] = f"stopped at the run's {cfg.budget_s:.0f} s budget"
                else:
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
    p.add_argument("--procs", type=int, help="client processes for the ws100, http and mcp50 loads")
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
        mcp_procs=args.procs,
    )
    names = args.only or list(MEASUREMENTS)
    auto = resolve_auto()
    pinned = {k: UVICORN_SETTINGS[k] for k in auto}
    if auto != pinned:  # `mcpgym serve` uses uvicorn's auto choices; the floor pins them
        print(f"warning: uvicorn auto resolves to {auto}, floor pins {pinned}", file=sys.stderr)
    t0 = time.perf_counter()
    busy = machine_busy()
    try:
        # `run` keeps to the budget itself; this only guards against a hang in stopping.
        rows, errors, bench = asyncio.run(asyncio.wait_for(run(cfg, names), cfg.budget_s + 30))
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
                "limit": r.limit,
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
