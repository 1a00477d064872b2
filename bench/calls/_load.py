"""Client load worker for bench/run.py: one process, one event loop, N connections.

Protocol (one line each way; the spec is JSON in argv[1]):
  worker: connects, warms up for `warmup_s`, pauses, prints `READY`;
  parent: `GO` → worker resumes, re-warms for `rewarm_s` (uncounted), counts for `duration_s`,
          prints `DONE` (the parent samples the server's CPU at GO and at DONE), pauses, then
          prints one JSON line with that window's counts; repeat;
  parent: `EXIT` (or end of input) → worker closes its connections and exits.
Paused workers send nothing, so while one server is measured the other one's client is idle.
Workers import neither mcpgym nor its client: the floor and mcpgym are driven by identical client
code (raw `websockets` and `httpx`).

Kinds:
  ws    — `conns` WebSocket connections; each sends `reset`, then loops `step`; when a reply says
          `done` it sends `reset` again (not counted). One round trip = one counted step.
  http  — `conns` concurrent keep-alive requests on one `httpx.AsyncClient`, POSTing `body` to
          `url` and decoding the JSON reply. One response = one counted request.
  mcp   — `conns` MCP clients (2025-11-25 sessions), each on its own raw HTTP/1.1 keep-alive
          connection (`_Http1`, no client library: httpx costs the client more CPU per request
          than the servers spend): `initialize` and `notifications/initialized` once, then a
          loop of `tools/call` (`call`: the params) with the `Mcp-Session-Id` header, each reply
          JSON-decoded and checked (`result`, not `isError`); `DELETE` at the end. JSON responses
          are required (an SSE reply is an error: the benchmark measures the JSON path). One
          reply = one counted call.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import sys
import time
from typing import Any

__all__ = ["main"]

_CLK_TCK = os.sysconf("SC_CLK_TCK")

# httpcore runs `import sniffio` on every request to learn the async library, and falls back to
# asyncio when it fails. anyio >= 4.12 no longer depends on sniffio, so in this environment every
# httpx request paid a failed import (a full sys.path scan, ~1.5 ms of client CPU). A `None` entry
# makes that import fail at once, with the same fallback; both servers get the same client.
if importlib.util.find_spec("sniffio") is None:
    sys.modules["sniffio"] = None  # type: ignore[assignment]


class _Window:
    """Shared state: tasks run while `running` is set and count only while `measuring`."""

    def __init__(self, keep_latencies: bool) -> None:
        self.running = asyncio.Event()
        self.measuring = False
        self.stop = False
        self.count = 0
        self.errors = 0
        self.first_error: str | None = None
        self.latencies: list[float] = []
        self.keep_latencies = keep_latencies

    def error(self, what: str) -> None:
        self.errors += 1
        if self.first_error is None:
            self.first_error = what[:300]

    def reset(self) -> None:
        self.count = self.errors = 0
        self.first_error = None
        self.latencies = []


# Handshakes in flight per load worker. `mcpgym serve` closes the oldest pending request head
# beyond `--max-pending-heads` (256) connections still handshaking, a guard against slow heads;
# the sweep's K = 500 and 1,000 sessions opened all at once on a loaded machine passed it. At
# most 64 per worker (the sweep runs 2) keeps every side below it; the connect phase is not
# counted.
_HANDSHAKES = asyncio.Semaphore(64)


async def _ws_conn(spec: dict[str, Any], win: _Window, ready: asyncio.Event) -> None:
    from websockets.asyncio.client import connect

    step = spec["step_frame"]
    reset = spec["reset_frame"]
    # compression=None: measure the server framework, not zlib (websockets clients, mcpgym's
    # included, offer permessage-deflate by default and uvicorn accepts it).
    async with _HANDSHAKES:  # see _HANDSHAKES: K = 1,000 at once is more than a server admits
        ws = await connect(
            spec["url"], compression=spec.get("compression"), ping_interval=None, max_size=2**24
        )
    async with ws:
        await ws.send(reset)
        json.loads(await ws.recv())
        ready.set()
        perf = time.perf_counter
        while not win.stop:
            if not win.running.is_set():
                await win.running.wait()
                continue
            t0 = perf()
            await ws.send(step)
            reply = json.loads(await ws.recv())
            if win.measuring:
                win.count += 1
                if win.keep_latencies:
                    win.latencies.append(perf() - t0)
            if reply.get("type") != "observation":
                win.error(json.dumps(reply))
                await asyncio.sleep(0.01)
            elif reply["data"].get("done"):
                await ws.send(reset)
                json.loads(await ws.recv())


async def _http_conn(spec: dict[str, Any], client: Any, win: _Window, ready: asyncio.Event) -> None:
    body = spec["body"].encode()
    headers = {"content-type": "application/json"}
    perf = time.perf_counter
    url = spec["url"]
    ready.set()
    while not win.stop:
        if not win.running.is_set():
            await win.running.wait()
            continue
        t0 = perf()
        response = await client.post(url, content=body, headers=headers)
        reply = response.json()
        if win.measuring:
            win.count += 1
            if win.keep_latencies:
                win.latencies.append(perf() - t0)
        if response.status_code != 200:
            win.error(f"{response.status_code} {json.dumps(reply)}")
            await asyncio.sleep(0.01)


class _Http1:
    """One raw HTTP/1.1 keep-alive connection: a request out, one response (Content-Length or
    chunked body) in. Enough for both servers' `/mcp`, and cheaper than any client library."""

    def __init__(self, url: str) -> None:
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.path = parts.path or "/"
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    def head(self, method: str, headers: dict[str, str]) -> bytes:
        """The request line and headers up to `Content-Length: ` (the length and body follow)."""
        lines = [f"{method} {self.path} HTTP/1.1", f"Host: {self.host}:{self.port}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        return ("\r\n".join(lines) + "\r\nContent-Length: ").encode()

    async def request(self, head: bytes, body: bytes) -> tuple[int, bytes, bytes]:
        """Send `head` (from `head()`) with `body`; returns (status, raw headers, body)."""
        assert self.reader is not None and self.writer is not None
        self.writer.write(b"%s%d\r\n\r\n%s" % (head, len(body), body))
        raw = await self.reader.readuntil(b"\r\n\r\n")
        status = int(raw[9:12])
        lower = raw.lower()
        i = lower.find(b"\r\ncontent-length:")
        if i >= 0:
            n = int(lower[i + 17 : lower.index(b"\r\n", i + 2)])
            return status, raw, await self.reader.readexactly(n) if n else b""
        if b"\r\ntransfer-encoding: chunked" not in lower:
            raise RuntimeError(f"response without a length: {raw[:200]!r}")
        chunks: list[bytes] = []
        while True:
            size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
            chunk = await self.reader.readexactly(size + 2)
            if not size:
                return status, raw, b"".join(chunks)
            chunks.append(chunk[:-2])

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(OSError):
                await self.writer.wait_closed()


def _header(raw: bytes, name: bytes) -> str | None:
    for line in raw.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == name:
            return value.strip().decode()
    return None


_MCP_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
}
_MCP_VERSION = "2025-11-25"


async def _mcp_conn(spec: dict[str, Any], win: _Window, ready: asyncio.Event) -> None:
    conn = _Http1(spec["url"])
    await conn.open()
    session: str | None = None
    try:
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": _MCP_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "mcpgym-bench", "version": "1"},
            },
        }
        status, raw, body = await conn.request(
            conn.head("POST", _MCP_HEADERS), json.dumps(init).encode()
        )
        kind = _header(raw, b"content-type") or ""
        if status != 200 or not kind.startswith("application/json"):
            raise RuntimeError(f"initialize: {status} {kind}: {body[:300]!r}")
        session = _header(raw, b"mcp-session-id")
        if not session or "result" not in json.loads(body):
            raise RuntimeError(f"initialize: no session or result: {raw[:300]!r} {body[:300]!r}")
        headers = _MCP_HEADERS | {"Mcp-Session-Id": session, "Mcp-Protocol-Version": _MCP_VERSION}
        head = conn.head("POST", headers)
        note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
        status, _, body = await conn.request(head, note)
        if status != 202:
            raise RuntimeError(f"notifications/initialized: {status} {body[:300]!r}")
        # tools/call bodies differ only in the id: `prefix + id + suffix`.
        prefix = b'{"jsonrpc":"2.0","id":'
        suffix = (',"method":"tools/call","params":' + json.dumps(spec["call"]) + "}").encode()
        ready.set()
        perf = time.perf_counter
        rid = 0
        while not win.stop:
            if not win.running.is_set():
                await win.running.wait()
                # Idle between windows longer than uvicorn's keep-alive (5 s), for either server,
                # the connection was closed: a new one (the MCP session is in the header) before
                # the re-warm, so the counted window never pays for it.
                await conn.close()
                await conn.open()
                continue
            rid += 1
            t0 = perf()
            status, _, body = await conn.request(head, b"%s%d%s" % (prefix, rid, suffix))
            reply = json.loads(body)
            if win.measuring:
                win.count += 1
                if win.keep_latencies:
                    win.latencies.append(perf() - t0)
            result = reply.get("result") if status == 200 else None
            if not isinstance(result, dict) or result.get("isError") or reply.get("id") != rid:
                win.error(f"{status} {body[:300]!r}")
                await asyncio.sleep(0.01)
    finally:
        if session is not None:  # end the session (the server would reap it when idle)
            with contextlib.suppress(OSError, RuntimeError, asyncio.IncompleteReadError):
                await asyncio.wait_for(
                    conn.request(conn.head("DELETE", {"Mcp-Session-Id": session}), b""), 2.0
                )
        await conn.close()


async def _race(aw: Any, watcher: asyncio.Task[None]) -> None:
    """Await `aw`, but fail as soon as any connection task fails."""
    task = asyncio.ensure_future(aw)
    done, _ = await asyncio.wait([task, watcher], return_when=asyncio.FIRST_COMPLETED)
    if watcher in done:
        task.cancel()
        watcher.result()
        raise RuntimeError("a connection ended early")
    task.result()


def _server_cpu_s(pid: int | None) -> float | None:
    """utime + stime of the server process (all threads), or None without a pid."""
    if pid is None:
        return None
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


async def _window(win: _Window, spec: dict[str, Any], watcher: asyncio.Task[None]) -> None:
    """One timed window; prints DONE at its end and then its counts.

    With `server_pid` in the spec, the server's CPU time is read here, at the edges of the
    counted window itself (the parent can only read it around the whole window, re-warm
    included, which charged the re-warm's steps to the counted ones)."""
    win.running.set()
    await _race(asyncio.sleep(spec["rewarm_s"]), watcher)
    win.reset()
    pid = spec.get("server_pid")
    server0 = _server_cpu_s(pid)
    cpu0, t0 = time.process_time(), time.perf_counter()
    win.measuring = True
    await _race(asyncio.sleep(spec["duration_s"]), watcher)
    win.measuring = False
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    server1 = _server_cpu_s(pid)
    count, lat = win.count, sorted(win.latencies)
    print("DONE", flush=True)
    win.running.clear()
    out: dict[str, Any] = {
        "count": count,
        "elapsed": elapsed,
        "client_cpu": cpu,
        "errors": win.errors,
        "first_error": win.first_error,
    }
    if server0 is not None and server1 is not None:
        out["server_cpu"] = server1 - server0
    if lat:
        out["p50_us"] = lat[len(lat) // 2] * 1e6
        out["p99_us"] = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1e6
    print(json.dumps(out), flush=True)


async def _run(spec: dict[str, Any]) -> None:
    n = spec["conns"]
    win = _Window(keep_latencies=n == 1 or bool(spec.get("latencies")))
    readies = [asyncio.Event() for _ in range(n)]
    client: Any = None
    if spec["kind"] == "ws":
        tasks = [asyncio.create_task(_ws_conn(spec, win, r)) for r in readies]
    elif spec["kind"] == "http":
        import httpx

        limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
        client = httpx.AsyncClient(limits=limits, timeout=30.0)
        tasks = [asyncio.create_task(_http_conn(spec, client, win, r)) for r in readies]
    elif spec["kind"] == "mcp":
        tasks = [asyncio.create_task(_mcp_conn(spec, win, r)) for r in readies]
    else:
        raise SystemExit(f"unknown kind {spec['kind']!r}")

    async def first_failure() -> None:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for t in done:
            exc = t.exception()
            if exc is not None:
                raise exc

    watcher = asyncio.create_task(first_failure())
    loop = asyncio.get_running_loop()
    try:
        ready_all = asyncio.gather(*(r.wait() for r in readies))
        await asyncio.wait_for(_race(ready_all, watcher), spec["connect_timeout_s"])
        win.running.set()
        await _race(asyncio.sleep(spec["warmup_s"]), watcher)
        win.running.clear()
        print("READY", flush=True)
        while True:
            line = (await loop.run_in_executor(None, sys.stdin.readline)).strip()
            if line != "GO":  # EXIT, or the parent went away
                break
            await _window(win, spec, watcher)
    finally:
        win.stop = True
        win.running.set()
        watcher.cancel()
        await asyncio.wait(tasks, timeout=2.0)
        for t in tasks:
            t.cancel()
        if client is not None:
            await client.aclose()


def main() -> None:
    spec = json.loads(sys.argv[1])
    try:
        import uvloop
    except ImportError:
        asyncio.run(_run(spec))
    else:
        uvloop.run(_run(spec))


if __name__ == "__main__":
    main()
