"""Origin and Host on every route (issue 26, defect 13): a cross-origin browser cannot change state
on any route (403), a DNS-rebound page cannot read any route (421), clients that are not
browsers (no `Origin`: OpenEnv's, ORS's, TestClient's `testserver`) keep working, and
`--allowed-origin` / `--allowed-host` extend the lists."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest
from starlette.testclient import TestClient
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from helpers.server import RunningServer, run_server
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import ServerSettings, create_app
from mcpgym.servers.guards.security import host_allowed

pytestmark = pytest.mark.server

EVIL = {"Origin": "http://evil.example"}
REBOUND = {"Host": "evil.example:8000"}
WRITES = [
    ("POST", "/reset", {}),
    ("POST", "/step", {"action": {"type": "list_tools"}}),
    ("POST", "/mcp/episodes", {"reset": {}}),
    ("POST", "/create_session", {}),
    ("POST", "/GuessEnv/tasks", {"split": "train"}),
    ("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create"}),
]
READS = ["/tasks", "/web/config.json", "/schema", "/metadata", "/state", "/health", "/web"]


@pytest.fixture(scope="module")
def served() -> Iterator[RunningServer]:
    with run_server(create_app(GuessEnv, web=True, ors_wire=True)) as server:
        yield server


@pytest.mark.parametrize(("method", "path", "body"), WRITES, ids=[p for _, p, _ in WRITES])
def test_cross_origin_writes_are_refused(
    served: RunningServer, method: str, path: str, body: object
) -> None:
    with httpx.Client(base_url=served.url, timeout=10) as client:
        refused = client.request(method, path, json=body, headers=EVIL)
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["code"] == "FORBIDDEN"
        allowed = client.request(method, path, json=body, headers={"Origin": served.url})
        assert allowed.status_code < 500 and allowed.status_code != 403, allowed.text
        plain = client.request(method, path, json=body)  # not a browser: no Origin
        assert plain.status_code not in (403, 421), plain.text


@pytest.mark.parametrize("path", READS)
def test_rebound_hosts_read_nothing(served: RunningServer, path: str) -> None:
    with httpx.Client(base_url=served.url, timeout=10) as client:
        refused = client.get(path, headers=REBOUND)
        assert refused.status_code == 421, refused.text
        assert refused.json()["error"]["code"] == "HOST_NOT_ALLOWED"
        assert client.get(path).status_code == 200


def test_websockets_are_guarded_before_the_upgrade(served: RunningServer) -> None:
    with pytest.raises(InvalidStatus) as refused:
        connect(served.ws_url, additional_headers=EVIL, open_timeout=5)
    assert refused.value.response.status_code == 403
    upgrade = (
        "GET /ws HTTP/1.1\r\nHost: evil.example:8000\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", served.port), timeout=5) as sock:
        sock.sendall(upgrade.encode())
        assert sock.recv(200).startswith(b"HTTP/1.1 421 "), "a rebound Host upgraded"
    with connect(served.ws_url, open_timeout=5):
        pass


def test_test_clients_and_configured_names_pass() -> None:
    settings = ServerSettings(allowed_hosts=("gym.example.com", "*.corp.test"))
    app = create_app(GuessEnv, settings=settings, allowed_origins=("https://ui.example.com",))
    with TestClient(app) as client:  # Host: testserver
        assert client.post("/reset", json={}).status_code == 200
        assert client.get("/tasks", headers={"Host": "gym.example.com"}).status_code == 200
        assert client.get("/tasks", headers={"Host": "a.corp.test:9"}).status_code == 200
        assert client.get("/tasks", headers={"Host": "corp.test.evil"}).status_code == 421
        good = {"Origin": "https://ui.example.com"}
        assert client.post("/reset", json={}, headers=good).status_code == 200


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1:8000", True),
        ("localhost", True),
        ("[::1]:9", True),
        ("10.1.2.3:8000", True),  # an IP is no name a page can rebind
        ("testserver", True),
        ("app.localhost:80", True),
        ("evil.example", False),
        ("evil.example.", False),
        ("attacker.test:8000", False),
        ("a:b:c", False),
        ("[::1", False),
        ("x:port", False),
    ],
)
def test_host_rules(host: str, allowed: bool) -> None:
    assert host_allowed(host, ServerSettings()) is allowed


def _raw(port: int, head: str) -> bytes:
    """What the server answers to a hand-written request head (no body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(head.encode("latin-1"))
        return sock.recv(4096)


TWICE = [  # each singleton sent twice, in the spellings a client or proxy may use
    ("Host: 127.0.0.1", "Host: evil.example"),
    ("Host: 127.0.0.1", "host: 127.0.0.1"),
    ("Origin: http://127.0.0.1", "Origin: http://evil.example"),
    ("Authorization: Bearer a", "AUTHORIZATION: Bearer b"),
    ("X-API-Key: a", "x-api-key: b"),
    ("Mcp-Session-Id: a", "Mcp-Session-Id: b"),
    ("X-Session-Id: a", "X-Session-Id: a"),
]


@pytest.mark.parametrize(("first", "second"), TWICE, ids=[f"{a}|{b}" for a, b in TWICE])
@pytest.mark.parametrize("request_line", ["GET /health", "POST /reset", "POST /mcp", "GET /ws"])
def test_a_singleton_header_sent_twice_is_refused(
    served: RunningServer, request_line: str, first: str, second: str
) -> None:
    lines = [f"{request_line} HTTP/1.1", first, second]
    if not first.lower().startswith("host"):
        lines.append("Host: 127.0.0.1")
    if request_line == "GET /ws":
        lines += ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13"]
        lines.append("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==")
    else:
        lines += ["Content-Type: application/json", "Content-Length: 0"]
    answer = _raw(served.port, "\r\n".join(lines) + "\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    if request_line == "GET /ws" and first.startswith("Origin"):  # websockets refuses it first
        assert b"invalid Origin header: multiple values" in answer
        return
    assert b'"DUPLICATE_HEADER"' in answer and b"sent more than once" in answer


def test_the_same_request_with_each_header_once_passes(served: RunningServer) -> None:
    head = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://127.0.0.1\r\n"
    head += "Authorization: Bearer a\r\nX-API-Key: a\r\nMcp-Session-Id: a\r\n\r\n"
    assert _raw(served.port, head).startswith(b"HTTP/1.1 200 ")


def test_production_refuses_two_tokens_before_it_reads_either() -> None:
    app = create_app(GuessEnv, mode="production", token="operator-secret")
    with TestClient(app, base_url="http://127.0.0.1") as client:
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        good = ("authorization", "Bearer operator-secret")
        both = client.post("/mcp", json=body, headers=[good, ("authorization", "Bearer x")])
        assert both.status_code == 400 and both.json()["error"]["code"] == "DUPLICATE_HEADER"
        reverse = client.post("/mcp", json=body, headers=[("authorization", "Bearer x"), good])
        assert reverse.status_code == 400
