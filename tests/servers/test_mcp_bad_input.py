"""Bad input on `/mcp` (a real uvicorn server, both modes) and on stdio: each case gets its
spec-correct answer, the server stays up, and a session opened before still works after."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from helpers.mcp import (
    JSON_SSE,
    MODERN,
    StdioProcess,
    initialize_body,
    open_session,
    rpc,
    rpc_result,
)
from helpers.server import RunningServer, run_server
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app

pytestmark = pytest.mark.server

TOKEN = "bad-input-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
LIMIT = 64 * 1024
LEGACY_HEADERS = {"Accept": JSON_SSE, "Content-Type": "application/json", **AUTH}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {}}


def modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {**LEGACY_HEADERS, "MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def modern_meta() -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }


class Target:
    """A running server, an HTTP client and a witness session opened before any bad input."""

    def __init__(self, server: RunningServer) -> None:
        self.server = server
        self.url = f"{server.url}/mcp"
        self.http = httpx.Client(timeout=15.0)
        self.witness = open_session(self.http, self.url, **AUTH)

    def post(self, content: Any, **headers: str) -> httpx.Response:
        body = content if isinstance(content, bytes | str) else json.dumps(content)
        return self.http.post(self.url, content=body, headers={**LEGACY_HEADERS, **headers})

    def assert_alive(self) -> None:
        """The server answers, and the witness session still works."""
        assert self.http.get(f"{self.server.url}/health").status_code == 200
        listed = rpc_result(rpc(self.http, self.url, self.witness, "tools/list", {}, 99, **AUTH))
        assert listed["result"]["tools"]


@pytest.fixture(scope="module", params=["simulation", "production"])
def target(request: pytest.FixtureRequest) -> Iterator[Target]:
    app = create_app(GuessEnv, mode=request.param, token=TOKEN, max_frame_bytes=LIMIT)
    with run_server(app) as server:
        target = Target(server)
        try:
            yield target
        finally:
            target.http.close()


def jsonrpc_error(response: httpx.Response, status: int, code: int) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None, body
    assert body["error"]["code"] == code, body
    return body["error"]


def test_invalid_json(target: Target) -> None:
    jsonrpc_error(
        target.post(b'{"jsonrpc": "2.0", "id": 1,', **{"Mcp-Session-Id": target.witness}),
        400,
        -32700,
    )
    jsonrpc_error(target.post(b"{not json", **modern_headers("tools/list")), 400, -32700)
    target.assert_alive()


def test_batch(target: Target) -> None:
    batch = [TOOLS_LIST, {**TOOLS_LIST, "id": 6}]
    jsonrpc_error(target.post(batch, **{"Mcp-Session-Id": target.witness}), 400, -32600)
    jsonrpc_error(target.post(batch, **modern_headers("tools/list")), 400, -32600)
    target.assert_alive()


def test_wrong_accept(target: Target) -> None:
    legacy = target.post(TOOLS_LIST, Accept="text/plain", **{"Mcp-Session-Id": target.witness})
    assert legacy.status_code == 406
    modern = target.post(
        {**TOOLS_LIST, "params": {"_meta": modern_meta()}},
        **{**modern_headers("tools/list"), "Accept": "text/plain"},
    )
    assert modern.status_code == 406
    target.assert_alive()


def test_wrong_content_type(target: Target) -> None:
    response = target.post(
        TOOLS_LIST, **{"Content-Type": "text/plain", "Mcp-Session-Id": target.witness}
    )
    assert response.status_code == 400
    target.assert_alive()


def test_unknown_session_id(target: Target) -> None:
    error = jsonrpc_error(target.post(TOOLS_LIST, **{"Mcp-Session-Id": "0" * 32}), 404, -32600)
    assert "not found" in error["message"].lower()
    gone = target.http.delete(target.url, headers={**AUTH, "Mcp-Session-Id": "f" * 32})
    assert gone.status_code == 404
    target.assert_alive()


REFUSED_OPENINGS = {  # requests naming no session that the server refuses
    "wrong Accept": (json.dumps(initialize_body()), {"Accept": "text/plain"}),
    "not initialize": (json.dumps(TOOLS_LIST), {}),
    "invalid JSON": ("{", {}),
    "wrong Content-Type": (json.dumps(initialize_body()), {"Content-Type": "text/plain"}),
    "bad id": (json.dumps({**TOOLS_LIST, "id": [1]}), {}),
}


@pytest.mark.parametrize("case", REFUSED_OPENINGS)
def test_a_refused_opening_names_no_session(target: Target, case: str) -> None:
    body, headers = REFUSED_OPENINGS[case]
    refused = target.post(body, **headers)
    assert 400 <= refused.status_code < 500, refused.text
    assert "mcp-session-id" not in refused.headers, "a session that was never kept"
    assert refused.json()["error"]["code"] < 0
    opened = target.post(initialize_body())  # the same client, now asking well: a session
    assert opened.status_code == 200 and opened.headers["mcp-session-id"]
    target.assert_alive()


@pytest.mark.parametrize("authorization", [None, "Bearer wrong", "Basic abc", f"bearer{TOKEN}"])
def test_missing_or_wrong_token(target: Target, authorization: str | None) -> None:
    headers = {"Accept": JSON_SSE, "Content-Type": "application/json"}
    if authorization is not None:
        headers["Authorization"] = authorization
    for body in (initialize_body(), TOOLS_LIST):
        response = target.http.post(
            target.url, json=body, headers={**headers, "Mcp-Session-Id": target.witness}
        )
        assert response.status_code == 401, response.text
        assert response.headers["www-authenticate"].startswith("Bearer")
    target.assert_alive()


@pytest.mark.parametrize("session", ["witness", "unknown", "none"])
def test_bad_origin_is_403_whatever_the_session(target: Target, session: str) -> None:
    sid = {"witness": target.witness, "unknown": "0" * 32, "none": None}[session]
    headers = {"Origin": "http://evil.example"}
    if sid is not None:
        headers["Mcp-Session-Id"] = sid
    response = target.post(initialize_body() if sid is None else TOOLS_LIST, **headers)
    assert response.status_code == 403
    target.assert_alive()


def test_local_origin_and_bad_host(target: Target) -> None:
    local = target.post(TOOLS_LIST, Origin=target.server.url, **{"Mcp-Session-Id": target.witness})
    assert local.status_code == 200
    rebinding = target.post(TOOLS_LIST, Host="evil.example", **{"Mcp-Session-Id": target.witness})
    assert rebinding.status_code == 421
    target.assert_alive()


def test_oversized_body(target: Target) -> None:
    big = {**TOOLS_LIST, "params": {"pad": "x" * (LIMIT + 1)}}
    declared = target.post(big, **{"Mcp-Session-Id": target.witness})
    assert declared.status_code == 413

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit applies while streaming
        data = json.dumps(big).encode()
        for i in range(0, len(data), 8192):
            yield data[i : i + 8192]

    streamed = target.http.post(
        target.url, content=chunks(), headers={**LEGACY_HEADERS, "Mcp-Session-Id": target.witness}
    )
    assert streamed.status_code == 413
    target.assert_alive()


def test_arguments_of_the_wrong_type(target: Target) -> None:
    args = {"name": "guess", "arguments": {"n": "fifty"}}
    legacy = rpc_result(rpc(target.http, target.url, target.witness, "tools/call", args, 7, **AUTH))
    result = legacy["result"]
    assert result["isError"] is True
    assert "structuredContent" not in result  # guess has an output schema: JSON text only
    payload = json.loads(result["content"][0]["text"])
    assert payload["error_type"] == "invalid_args"
    assert payload["errors"][0] == {
        "field": "n",
        "message": "Input should be a valid integer, unable to parse string as an integer",
        "type": "int_parsing",
        "got": "fifty",
    }

    body = {
        "jsonrpc": "2.0",
        "id": 8,
        "method": "tools/call",
        "params": {**args, "_meta": modern_meta()},
    }
    modern = target.post(body, **modern_headers("tools/call", "guess"))
    assert modern.status_code == 200
    assert text_payload(modern.json()["result"])["error_type"] == "invalid_args"

    not_an_object = {"name": "guess", "arguments": [1, 2]}
    surface = rpc_result_or_error(
        rpc(target.http, target.url, target.witness, "tools/call", not_an_object, 9, **AUTH)
    )
    assert surface["error"]["code"] == -32602
    target.assert_alive()


def text_payload(result: dict[str, Any]) -> dict[str, Any]:
    assert result["isError"] is True
    return json.loads(result["content"][0]["text"])


def rpc_result_or_error(response: httpx.Response) -> dict[str, Any]:
    if response.status_code == 200:
        return rpc_result(response)
    return response.json()


# -- stdio --------------------------------------------------------------------------------------


def test_stdio_bad_lines() -> None:
    proc = StdioProcess("mcpgym.examples.guess:GuessEnv")
    try:
        proc.initialize()
        proc.send("this is not json")
        assert proc.receive()["error"]["code"] == -32700
        proc.send(json.dumps([TOOLS_LIST]))
        batch = proc.receive()
        assert batch["id"] is None and batch["error"]["code"] == -32600
        proc.send({"id": 3, "method": "tools/list"})  # no "jsonrpc": not a JSON-RPC message
        assert proc.receive()["error"]["code"] == -32600

        wrong = proc.request("tools/call", {"name": "guess", "arguments": {"n": [1]}}, 4)
        assert wrong["result"]["isError"] is True
        assert text_payload(wrong["result"])["error_type"] == "invalid_args"
        missing = proc.request("tools/call", {"name": "guess"}, 5)
        assert text_payload(missing["result"])["errors"][0]["field"] == "n"
        surface = proc.request("tools/call", {"name": "guess", "arguments": [1, 2]}, 6)
        assert surface["error"]["code"] == -32602
        unknown = proc.request("tools/call", {"name": "hint", "arguments": {}}, 7)
        assert unknown["error"]["code"] == -32602
        assert proc.request("resources/list", {}, 8)["error"]["code"] == -32601

        assert proc.request("tools/list", {}, 9)["result"]["tools"]  # still serving
        code, stderr = proc.close_stdin()
    finally:
        proc.kill()
    assert code == 0
    assert "Traceback" not in stderr
