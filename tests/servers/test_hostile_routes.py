"""Every HTTP route of the app, in both modes, under hypothesis (issue 26's acceptance): the
simulation routes, the task routes, OpenEnv's dialect and task API, `/mcp` and its episodes, the
ORS wire and the web routes, found from the app's own route table, with hostile paths, headers
and bodies. Never a 5xx, every error body strict JSON, nothing left open by a request that
failed (and whatever a request that succeeded opened is closed again), the server healthy after.
`just test-fuzz` runs these properties (and test_hostile_inputs.py's) at 200 examples each.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.routing import Route

from helpers.fuzz import FUZZ, HOSTILE, VALUES, strict
from helpers.server import RunningServer, run_server
from helpers.wait import wait_until
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app

pytestmark = pytest.mark.server

ACCEPT = "application/json, text/event-stream"
SWEEP = settings(
    FUZZ, max_examples=FUZZ.max_examples if "MCPGYM_FUZZ_EXAMPLES" in os.environ else 30
)
"""30 examples per mode in the default run (~12 s); `just test-fuzz` sets the size."""


def _routes(app: Any) -> list[tuple[str, str]]:
    found = []
    for route in app.routes:
        if isinstance(route, Route):
            found += [(m, route.path) for m in sorted(route.methods or ()) if m != "HEAD"]
    return found


def _served(mode: str) -> Iterator[tuple[RunningServer, list[tuple[str, str]]]]:
    options: dict[str, Any] = {"web": True}
    if mode == "simulation":
        options["ors_wire"] = True
    app = create_app(GuessEnv, mode=mode, max_sessions=64, **options)
    with run_server(app) as running:
        yield running, _routes(app)
        assert running.health()["status"] == "healthy"


@pytest.fixture(scope="module", params=["simulation", "production"])
def served(request: pytest.FixtureRequest) -> Iterator[tuple[RunningServer, list[tuple[str, str]]]]:
    yield from _served(request.param)


_segments = st.sampled_from(
    ["GuessEnv", "guessenv", "train", "test", "0", "-1", "9" * 30, "..", "%00", "a" * 300]
) | st.text(max_size=24)
_openenv = st.builds(
    lambda method, rid, params: {"jsonrpc": "2.0", "id": rid, "method": method, "params": params},
    st.sampled_from(
        ["openenv/session/create", "openenv/session/close", "tools/list", "tools/call"]
    ),
    st.none() | st.integers() | st.text(max_size=8) | st.floats(allow_nan=False),
    VALUES
    | st.fixed_dictionaries(
        {"session_id": st.text(max_size=30), "name": st.sampled_from(["guess", "nope"])},
        optional={"arguments": VALUES},
    ),
)
_ors = st.fixed_dictionaries(
    {},
    optional={
        "task_spec": VALUES | st.just({"reset": {}}),
        "split": VALUES,
        "index": VALUES,
        "name": st.sampled_from(["guess", "nope"]) | VALUES,
        "input": VALUES,
        "task_id": VALUES,
    },
)
_bodies = HOSTILE | _openenv.map(json.dumps) | _ors.map(json.dumps) | st.just("")
_headers = st.fixed_dictionaries(
    {},
    optional={
        "X-Session-ID": st.sampled_from(["never-made", "a" * 129, "1"]) | st.text(max_size=20),
        "Mcp-Session-Id": st.sampled_from(["0" * 32, "nope"]),
        "Origin": st.sampled_from(["http://127.0.0.1", "http://evil.example", "null"]),
        "Content-Type": st.sampled_from(["application/json", "text/plain", "x/y; q=1"]),
        "Accept": st.sampled_from([ACCEPT, "application/json", "*/*"]),
        "Authorization": st.sampled_from(["Bearer nope", "Basic Zm9v", "Bearer "]),
        "Host": st.sampled_from(["127.0.0.1", "localhost:1", "evil.example"]),
    },
)


def _path(template: str, fill: list[str]) -> str:
    parts = template.split("/")
    for i, part in enumerate(parts):
        if part.startswith("{"):
            text = fill.pop() if fill else "x"
            parts[i] = quote(
                text.encode("utf-8", "surrogatepass").decode("utf-8", "replace"), safe=""
            )
    return "/".join(parts)


def _sendable(value: str) -> bool:
    """Whether an HTTP client can send `value` at all (no control characters, not blank)."""
    return bool(value.strip()) and not any(ord(c) < 0x20 or ord(c) == 0x7F for c in value)


def _cleanup(client: httpx.Client, path: str, response: httpx.Response) -> None:
    """Close whatever a successful request opened."""
    if path == "/mcp/episodes" and response.status_code == 201:
        client.delete(f"/mcp/episodes/{response.json()['episode']}")
    if path == "/create" and response.status_code == 200:
        client.post("/delete", headers={"X-Session-ID": response.json()["sid"]})
    if path == "/mcp" and response.status_code == 200:
        sid = response.headers.get("mcp-session-id")
        if sid:
            client.delete("/mcp", headers={"Mcp-Session-Id": sid, "Accept": ACCEPT})
        if "application/json" in response.headers.get("content-type", ""):
            made = response.json().get("result")
            if isinstance(made, dict) and isinstance(made.get("session_id"), str):
                close = {"session_id": made["session_id"]}
                body = {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "openenv/session/close",
                    "params": close,
                }
                client.post("/mcp", json=body)


def _open_count(server: RunningServer) -> int:
    state = server.server.config.app.state
    ors = getattr(state, "ors_wire", None)
    dialect = getattr(state, "openenv", None)
    return (
        len(state.sessions)
        + state.mcp.open_sessions()
        + (len(ors.live) if ors is not None else 0)
        + (len(dialect) if dialect is not None else 0)
    )


def _check(
    server: RunningServer,
    route: tuple[str, str],
    fill: list[str],
    body: str,
    headers: dict[str, str],
) -> None:
    method, template = route
    path = _path(template, fill)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        raw = {k: v.strip().encode("utf-8", "replace") for k, v in headers.items() if _sendable(v)}
        response = client.request(
            method, path, content=body.encode("utf-8", "surrogatepass"), headers=raw
        )
        assert response.status_code < 500, (method, path, body[:200], response.text[:300])
        kind = response.headers.get("content-type", "")
        if response.status_code >= 400:
            assert kind.startswith("application/json"), (method, path, kind, response.text[:200])
        if kind.startswith("application/json") and response.content:
            strict(response.content)
        _cleanup(client, template, response)
    wait_until(
        lambda: _open_count(server) == 0, timeout=10, what=f"nothing left open by {method} {path}"
    )


@SWEEP
@given(data=st.data(), body=_bodies, headers=_headers, fill=st.lists(_segments, max_size=3))
def test_every_route(
    served: tuple[RunningServer, list[tuple[str, str]]],
    data: st.DataObject,
    body: str,
    headers: dict[str, str],
    fill: list[str],
) -> None:
    server, routes = served
    _check(server, data.draw(st.sampled_from(routes)), fill, body, headers)


def test_the_server_is_healthy_after(served: tuple[RunningServer, list[tuple[str, str]]]) -> None:
    server, routes = served
    assert len(routes) >= (20 if server.server.config.app.state.settings.ors_wire else 3)
    health = server.health()
    assert health["status"] == "healthy" and health["workers"]["detached"] == 0
    assert _open_count(server) == 0


@pytest.mark.fuzz
@pytest.mark.skipif("MCPGYM_FUZZ_EXAMPLES" not in os.environ, reason="just test-fuzz sets the size")
def test_the_sweep_ran_at_its_size() -> None:
    """The `fuzz` run: the properties above at `MCPGYM_FUZZ_EXAMPLES` examples each."""
    assert int(os.environ["MCPGYM_FUZZ_EXAMPLES"]) >= 200
