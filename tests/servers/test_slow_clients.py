"""Slow clients (slowloris, issue 26 defect 6) on both HTTP parsers against a real uvicorn: a head
or a WebSocket handshake must arrive within `head_timeout_s` (408 and closed), a connection that
never sends a byte is closed too, a stalled body ends its connection, at most `max_pending_heads`
heads are in progress at once (the oldest goes), and `/health` and new sessions are served
throughout; a quiet WebSocket session and a slow tool call are not slow clients."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import httpx
import pytest
from websockets.sync.client import connect

from helpers.server import RunningServer, run_server
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app
from mcpgym.servers.guards.limits import limited_protocol

pytestmark = pytest.mark.server

TIMEOUT = 0.6
PENDING = 4


@pytest.fixture(scope="module", params=["h11", "httptools"])
def slow(request: pytest.FixtureRequest) -> Iterator[RunningServer]:
    app = create_app(GuessEnv, head_timeout_s=TIMEOUT, max_pending_heads=PENDING)
    http = limited_protocol(32 * 1024, request.param, TIMEOUT, PENDING)
    with run_server(app, http=http) as running:
        yield running


def _open(server: RunningServer, first: bytes = b"") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    if first:
        sock.sendall(first)
    return sock


def _until_closed(sock: socket.socket, within: float) -> tuple[bytes, float]:
    """Everything the server sends until it closes; fails if it has not closed `within` s."""
    started, got = time.monotonic(), b""
    sock.settimeout(within)
    try:
        while chunk := sock.recv(65536):
            got += chunk
    except TimeoutError:
        raise AssertionError(f"still open after {within} s (got {got[:80]!r})") from None
    except ConnectionResetError:
        pass
    finally:
        sock.close()
    return got, time.monotonic() - started


def test_a_connection_that_sends_nothing_is_closed(slow: RunningServer) -> None:
    got, took = _until_closed(_open(slow), within=TIMEOUT * 6)
    assert took >= TIMEOUT * 0.8 and (not got or b" 408 " in got)


def test_a_dripping_head_gets_408_and_is_closed(slow: RunningServer) -> None:
    sock = _open(slow, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    for _ in range(3):  # still dripping: each byte arrives, the deadline does not move
        time.sleep(TIMEOUT / 3)
        try:
            sock.sendall(b"X")
        except OSError:
            break
    got, _ = _until_closed(sock, within=TIMEOUT * 6)
    assert b" 408 " in got and b"REQUEST_TIMEOUT" in got, got


def test_a_dripping_websocket_handshake_gets_408(slow: RunningServer) -> None:
    head = (
        b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Version: 13\r\n"
    )
    got, _ = _until_closed(_open(slow, head), within=TIMEOUT * 6)
    assert b" 408 " in got, got


def test_a_stalled_body_ends_its_connection(slow: RunningServer) -> None:
    head = b"POST /reset HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{"
    _, took = _until_closed(_open(slow, head), within=TIMEOUT * 6)
    assert took >= TIMEOUT * 0.8


def test_slow_heads_are_capped_and_health_and_sessions_still_served(slow: RunningServer) -> None:
    socks = [_open(slow, b"GET /health HTTP/1.1\r\n") for _ in range(PENDING * 3)]
    try:
        time.sleep(0.2)
        closed = 0
        for sock in socks:
            sock.settimeout(0.05)
            try:
                closed += sock.recv(1) == b""
            except TimeoutError:
                pass
            except ConnectionResetError:
                closed += 1
        assert closed >= PENDING * 2 - 1, closed  # the oldest made way for the newest
        assert httpx.get(f"{slow.url}/health", timeout=5).status_code == 200
        with connect(slow.ws_url, open_timeout=5) as ws:
            ws.send(json.dumps({"type": "reset"}))
            assert json.loads(ws.recv(timeout=5))["type"] == "observation"
    finally:
        for sock in socks:
            sock.close()


def test_quiet_sessions_and_kept_alive_requests_are_not_slow_clients(slow: RunningServer) -> None:
    with connect(slow.ws_url, open_timeout=5) as ws:
        ws.send(json.dumps({"type": "reset"}))
        ws.recv(timeout=5)
        time.sleep(TIMEOUT * 2.5)  # an agent thinking: no bytes, and no deadline
        ws.send(json.dumps({"type": "state"}))
        assert json.loads(ws.recv(timeout=5))["type"] == "state"
    with httpx.Client(base_url=slow.url, timeout=5) as client:
        for _ in range(3):
            assert client.post("/reset", json={}).status_code == 200
            time.sleep(TIMEOUT / 2)
