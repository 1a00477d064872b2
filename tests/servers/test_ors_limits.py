"""The ORS wire's own bounds (issue 26, defect 11), raw HTTP (no ORS client needed): session ids
are minted by the server, a session's queue of calls is bounded (429), and a started call's
result is kept until its session ends, so a retry never runs the step twice."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from helpers.envs import SlowGuessEnv
from helpers.server import RunningServer, run_server
from helpers.wait import wait_until
from mcpgym.servers import create_app
from mcpgym.servers.ors import sessions as ors_sessions

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def ors() -> Iterator[RunningServer]:
    with run_server(create_app(SlowGuessEnv, ors_wire=True, max_sessions=8)) as running:
        yield running


def _events(text: str) -> list[tuple[str, str]]:
    out = []
    for block in text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in lines:
            out.append((lines["event"], lines.get("data", "")))
    return out


def _lease(c: httpx.Client) -> str:
    return _events(c.post("/create_session", json={}).text)[0][1]


def _open(c: httpx.Client) -> str:
    sid = _lease(c)
    body = {"task_spec": {"reset": {"secret": 42}}}
    assert c.post("/create", json=body, headers={"X-Session-ID": sid}).status_code == 200
    return sid


def _call(c: httpx.Client, sid: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    reply = c.post("/call", json=body, headers={"X-Session-ID": sid})
    assert reply.status_code == 200, reply.text
    return _events(reply.text)


def test_session_ids_are_minted_by_the_server(ors: RunningServer) -> None:
    with httpx.Client(base_url=ors.url, timeout=30) as c:
        body = {"task_spec": {"reset": {"secret": 1}}}
        for chosen in ("1", "my-session", "a" * 32):
            refused = c.post("/create", json=body, headers={"X-Session-ID": chosen})
            assert refused.status_code == 404, refused.text
            assert refused.json()["error"]["code"] == "SESSION_NOT_FOUND"
        assert c.get("/health").json()["sessions"] == 0
        sid = _lease(c)
        assert len(sid) == 32
        assert c.post("/create", json=body, headers={"X-Session-ID": sid}).status_code == 200
        again = c.post("/create", json=body, headers={"X-Session-ID": sid})
        assert again.status_code == 409  # once
        c.post("/delete", headers={"X-Session-ID": sid})


def test_a_sessions_queue_is_bounded(ors: RunningServer) -> None:
    limit = ors_sessions.MAX_QUEUED_CALLS
    with httpx.Client(base_url=ors.url, timeout=30) as c:
        sid = _open(c)
        session = ors.server.config.app.state.ors_wire.live[sid]
        started = [_started(ors.url, sid, _nap(1.5))]  # holds the session's turn
        wait_until(lambda: session.pending() == 1, timeout=20, what="the first call running")
        started += [_started(ors.url, sid, _nap(0.01)) for _ in range(limit - 1)]
        try:
            wait_until(lambda: session.pending() == limit, timeout=20, what="calls queued")
            refused = c.post("/call", json=_nap(0.01), headers={"X-Session-ID": sid})
            assert refused.status_code == 429, refused.text
            assert refused.json()["error"]["code"] == "QUOTA_REACHED"
        finally:
            for thread in started:
                thread.join(timeout=30)
        assert _call(c, sid, _nap(0.01))[-1][0] == "end"  # the queue drained: calls again
        c.post("/delete", headers={"X-Session-ID": sid})


def test_every_started_call_keeps_its_result_until_the_session_ends(ors: RunningServer) -> None:
    with httpx.Client(base_url=ors.url, timeout=30) as c:
        sid = _open(c)
        first = _call(c, sid, {"name": "guess", "input": {"n": 5}})
        for _ in range(20):  # more than the 8 calls an old version kept
            _call(c, sid, {"name": "guess", "input": {"n": 6}})
        retry = {"name": "guess", "input": {"n": 5}, "task_id": first[0][1]}
        assert _call(c, sid, retry) == first  # the kept answer, not a second step
        state = c.post(
            "/call", json={"name": "guess", "input": {"n": 7}}, headers={"X-Session-ID": sid}
        )
        data = "".join(d for e, d in _events(state.text) if e in ("chunk", "end"))
        assert json.loads(data)["output"]["metadata"]["result"]["guesses"] == 22
        c.post("/delete", headers={"X-Session-ID": sid})


def _nap(seconds: float) -> dict[str, Any]:
    return {"name": "nap", "input": {"seconds": seconds}}


def _started(url: str, sid: str, body: dict[str, Any]) -> threading.Thread:
    """A call made on a connection of its own, running in the background."""

    def run() -> None:
        with httpx.Client(base_url=url, timeout=30) as c:
            _call(c, sid, body)

    thread = threading.Thread(target=run)
    thread.start()
    return thread
