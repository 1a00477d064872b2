"""The ORS wire under hostile and careless clients: every mistake is a structured 4xx (never a
5xx, never a hang), sessions are isolated and capped, deleted sessions stay deleted, tokens and
modes are `/ws`'s. Raw HTTP where the wire is the point, the real `ors.client.ORS` elsewhere.
Needs `ors-sdk` (`just test-ors`).
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from helpers.compat import OPENREWARD_CLIENT, ORS_CLIENT, compat
from helpers.envs import CrashingRewardEnv, SlowGuessEnv
from helpers.mcp import MCPGYM
from helpers.server import run_server
from helpers.wait import wait_until
from mcpgym import MCPEnvironment, Observation, tool
from mcpgym.content import Image, Text
from mcpgym.servers import ServerSettings, create_app

ors = pytest.importorskip("ors", reason="just test-ors installs ors-sdk")
pytestmark = [pytest.mark.ors, pytest.mark.server]

from ors.client import ORS  # noqa: E402
from ors.client._types import Task, ToolCallError  # noqa: E402

GUESS = Task(environment_name="SlowGuessEnv", task_spec={"reset": {"secret": 42}})


class Adder(MCPEnvironment):
    """No reward at all: a refused call is ORS's `ok: false`. Its prompt is ORS blocks."""

    blocking = False

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Any:
        super().reset(seed=seed, episode_id=episode_id)
        return Observation(metadata={"prompt": [{"type": "text", "text": "Add."}]})

    @tool
    def add(self, a: int, b: int) -> int:
        """a + b."""
        return a + b

    @tool
    def paint(self) -> list[Text | Image]:
        """A caption and a picture."""
        return [Text("here:"), Image.from_bytes(b"\x89PNG-ish", "image/png")]


def _events(text: str) -> list[tuple[str, str]]:
    out = []
    for block in text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        if "event" in lines:
            out.append((lines["event"], lines.get("data", "")))
    return out


def _lease(c: httpx.Client, **headers: str) -> str:
    r = c.post("/create_session", json={}, headers=headers)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    (kind, sid), end = _events(r.text)
    assert kind == "task_id" and end == ("end", "")
    return sid


def _open(c: httpx.Client, reset: dict[str, Any], **headers: str) -> str:
    sid = _lease(c, **headers)
    r = c.post(
        "/create", json={"task_spec": {"reset": reset}}, headers={"X-Session-ID": sid, **headers}
    )
    assert r.status_code == 200 and r.json() == {"sid": sid}, r.text
    return sid


def _call(c: httpx.Client, sid: str, body: dict[str, Any], env: str = "/call") -> dict[str, Any]:
    r = c.post(env, json=body, headers={"X-Session-ID": sid})
    assert r.status_code == 200, r.text
    events = _events(r.text)
    assert events[0][0] == "task_id" and events[-1][0] in ("end", "error"), events
    data = "".join(d for e, d in events[1:] if e in ("chunk", "end"))
    return (
        {"task_id": events[0][1], "error": events[-1][1]}
        if events[-1][0] == "error"
        else {
            "task_id": events[0][1],
            **json.loads(data),
        }
    )


def _structured(r: httpx.Response, status: int, code: str | None = None) -> dict[str, Any]:
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert isinstance(body["error"]["message"], str) and body["detail"] == body["error"]["message"]
    if code is not None:
        assert body["error"]["code"] == code, body
    return body


@pytest.fixture
def guess_url() -> Iterator[str]:
    SlowGuessEnv.napping.clear()
    with run_server(create_app(SlowGuessEnv, ors_wire=True, max_sessions=4)) as running:
        yield running.url


SESSION_ROUTES = [
    ("POST", "/ping", None),
    ("GET", "/SlowGuessEnv/prompt", None),
    ("GET", "/prompt", None),
    ("GET", "/SlowGuessEnv/task_tools", None),
    ("POST", "/SlowGuessEnv/call", {"name": "guess", "input": {"n": 1}}),
    ("POST", "/call", {"name": "guess", "input": {"n": 1}}),
]


def test_session_ids_missing_malformed_unknown(guess_url: str) -> None:
    with httpx.Client(base_url=guess_url, timeout=10) as c:
        for method, path, body in SESSION_ROUTES:
            _structured(c.request(method, path, json=body), 422)
            for bad in ("x" * 129, "a b", "../etc", "a/b", "%00", b"\xc3\xa9"):
                r = c.request(method, path, json=body, headers={"X-Session-ID": bad})
                _structured(r, 422)
            r = c.request(method, path, json=body, headers={"X-Session-ID": "never-made"})
            _structured(r, 404, "SESSION_NOT_FOUND")
        _structured(c.get("/OtherEnv/prompt", headers={"X-Session-ID": "x"}), 404)
        assert c.get("/health").json()["sessions"] == 0


BAD_CREATE: list[Any] = [
    b"{",
    b'{"split": NaN, "index": 0}',
    b'{"split": "v", "index": 1e999}',
    b"[" * 200 + b"]" * 200,
    b"[]",
    b'"text"',
    {},
    {"split": "train"},
    {"index": 0},
    {"split": "train", "index": "0"},
    {"split": "train", "index": True},
    {"split": "train", "index": 0, "task_spec": {"reset": {}}},
    {"task_spec": []},
    {"task_spec": {"nothing": 1}},
    {"task_spec": {"id": "no-such-task"}},
    {"task_spec": {"reset": {"secret": 3}}, "extra": 1},
    {"task_spec": {"reset": {"secret": 3}}, "toolset_name": "codex"},
    {"task_spec": {"reset": {"secret": 3}}, "env_name": "OtherEnv"},
    {"task_spec": {"reset": {"secret": 3}}, "secrets": {"k": 1}},
    {"task_spec": {"reset": {"seed": "x"}}},
    {"task_spec": {"reset": {"low": 9, "high": 1}}},
    {"split": "nope", "index": 0},
]


@compat(
    OPENREWARD_CLIENT,
    "the ORS wire (openreward extensions)",
    "refused",
    "built-in toolsets (toolset_name) and environment overrides are refused with 422, "
    "opening nothing",
)
def test_bad_create_bodies_are_4xx_and_open_nothing(guess_url: str) -> None:
    with httpx.Client(base_url=guess_url, timeout=10) as c:
        sid = _lease(c)
        for bad in BAD_CREATE:
            raw = bad if isinstance(bad, bytes) else json.dumps(bad).encode()
            r = c.post("/create", content=raw, headers={"X-Session-ID": sid})
            assert 400 <= r.status_code < 500, (bad, r.status_code, r.text)
            _structured(r, r.status_code)
        too_big = b'{"task_spec": {"reset": {"pad": "' + b"x" * (5 << 20) + b'"}}}'
        _structured(c.post("/create", content=too_big, headers={"X-Session-ID": sid}), 413)
        for bad_lease in (b"[", b'{"env": {"OPENAI_API_KEY": "k"}}', b'{"other": 1}'):
            r = c.post("/create_session", content=bad_lease)
            assert 400 <= r.status_code < 500, (bad_lease, r.text)
        assert c.get("/health").json()["sessions"] == 0
        # The same id still opens once the body is right; a second /create on it is refused.
        _open_with(c, sid)
        body = {"task_spec": {"reset": {"secret": 1}}}
        _structured(c.post("/create", json=body, headers={"X-Session-ID": sid}), 409)


def _open_with(c: httpx.Client, sid: str) -> None:
    body = {"task_spec": {"reset": {"secret": 42}}}
    assert c.post("/create", json=body, headers={"X-Session-ID": sid}).status_code == 200


BAD_CALLS: list[Any] = [
    b"{",
    b'{"name": "guess", "input": {"n": NaN}}',
    b"[]",
    {"name": "guess"},
    {"input": {"n": 1}},
    {"name": 3, "input": {}},
    {"name": "guess", "input": [1]},
    {"name": "guess", "input": {"n": 1}, "extra": True},
    {"name": "guess", "input": {"n": 1}, "task_id": 5},
    {"name": "guess", "input": {"n": 1}, "task_id": "not-a-call"},
]


def test_bad_call_bodies_unknown_tools_and_bad_args(guess_url: str) -> None:
    with httpx.Client(base_url=guess_url, timeout=10) as c:
        sid = _open(c, {"secret": 42})
        for bad in BAD_CALLS:
            raw = bad if isinstance(bad, bytes) else json.dumps(bad).encode()
            r = c.post("/SlowGuessEnv/call", content=raw, headers={"X-Session-ID": sid})
            assert 400 <= r.status_code < 500, (bad, r.status_code, r.text)
            _structured(r, r.status_code)
        # GuessEnv scores a failed call (-0.1): it is a step, so it is an output, not ok: false.
        for name, args, kind in [
            ("nope", {}, "tool_not_found"),
            ("guess", {}, "invalid_args"),
            ("guess", {"n": "x"}, "invalid_args"),
            ("guess", {"n": None}, "invalid_args"),
            ("guess", {"m": 1}, "invalid_args"),
            ("guess", {"n": 1000}, "execution_error"),
        ]:
            got = _call(c, sid, {"name": name, "input": args})
            assert got["ok"] is True, got
            out = got["output"]
            assert out["metadata"]["error"]["error_type"] == kind, (name, args, out)
            assert (out["reward"], out["finished"]) == (-0.1, False)
            assert json.loads(out["blocks"][0]["text"]) == out["metadata"]["error"]
        won = _call(c, sid, {"name": "guess", "input": {"n": 42}})["output"]
        assert (won["reward"], won["finished"]) == (1.0, True)
        assert won["metadata"]["result"] == {"verdict": "correct", "guesses": 1}


def test_refused_calls_content_blocks_and_block_prompts() -> None:
    """Without a reward a refused call is ORS's `ok: false` (openreward's `reason` beside it),
    which the ORS client raises as `ToolCallError`; MCP content becomes ORS blocks."""
    with run_server(create_app(Adder, ors_wire=True)) as running:
        with httpx.Client(base_url=running.url, timeout=10) as c:
            sid = _open(c, {})
            for name, args, reason in [
                ("nope", {}, "not_found"),
                ("add", {"a": 1}, "input_validation"),
                ("add", {"a": "x", "b": 2}, "input_validation"),
                ("add", {"a": 1, "b": 2, "c": 3}, "input_validation"),
            ]:
                got = _call(c, sid, {"name": name, "input": args})
                assert got["ok"] is False and got["reason"] == reason, got
                assert name in got["error"] or "a" in got["error"], got
        with ORS(base_url=running.url) as client:
            env = client.environment("Adder")
            with env.session(task=Task("Adder", {"reset": {}})) as s:
                assert [(b.type, b.text) for b in s.get_prompt()] == [("text", "Add.")]  # type: ignore[union-attr]
                with pytest.raises(ToolCallError, match="nope"):
                    s.call_tool("nope", {})
                with pytest.raises(ToolCallError):
                    s.call_tool("add", {"a": 1})
                assert s.call_tool("add", {"a": 2, "b": 3}).metadata == {"result": 5}
                caption, picture = s.call_tool("paint", {}).blocks
                assert (caption.type, caption.text) == ("text", "here:")  # type: ignore[union-attr]
                assert picture.type == "image" and picture.mimeType == "image/png"  # type: ignore[union-attr]


def test_deleted_and_reaped_sessions() -> None:
    app = create_app(SlowGuessEnv, ors_wire=True, idle_timeout_s=0.5, reap_interval_s=0.05)
    with run_server(app) as running, httpx.Client(base_url=running.url, timeout=10) as c:
        sid = _open(c, {"secret": 42})
        assert c.post("/delete", headers={"X-Session-ID": sid}).json() == {
            "sid": sid,
            "deleted": True,
        }
        for method, path, body in SESSION_ROUTES:
            _structured(c.request(method, path, json=body, headers={"X-Session-ID": sid}), 410)
        assert c.post("/delete", headers={"X-Session-ID": sid}).json()["deleted"] is False
        assert c.post("/delete_session", headers={"X-Session-ID": sid}).status_code == 200
        body = {"task_spec": {"reset": {"secret": 42}}}  # ids are minted: a deleted one is gone
        _structured(c.post("/create", json=body, headers={"X-Session-ID": sid}), 404)
        sid = _lease(c)
        _open_with(c, sid)
        assert c.post("/ping", headers={"X-Session-ID": sid}).status_code == 200
        # Left alone past --idle-timeout, it is reaped like a /ws session.
        wait_until(
            lambda: c.get("/health").json()["sessions"] == 0,
            timeout=10,
            what="the idle ORS session reaped",
        )
        _structured(c.post("/ping", headers={"X-Session-ID": sid}), 410, "SESSION_DELETED")


def test_two_sessions_isolated_and_a_slow_one_stalls_nobody(guess_url: str) -> None:
    with ORS(base_url=guess_url) as one, ORS(base_url=guess_url) as two:
        low = Task("SlowGuessEnv", {"reset": {"secret": 10}})
        high = Task("SlowGuessEnv", {"reset": {"secret": 90}})
        env1, env2 = one.environment("SlowGuessEnv"), two.environment("SlowGuessEnv")
        with env1.session(task=low) as a, env2.session(task=high) as b:
            assert a.sid != b.sid
            assert a.call_tool("guess", {"n": 10}).finished is True
            miss = b.call_tool("guess", {"n": 10})
            assert (miss.finished, miss.metadata["result"]) == (
                False,
                {"verdict": "higher", "guesses": 1},
            )  # type: ignore[index]
            assert b.call_tool("guess", {"n": 90}).metadata["result"]["guesses"] == 2  # type: ignore[index]
        with httpx.Client(base_url=guess_url, timeout=30) as c:
            slow, quick = _open(c, {"secret": 5}), _open(c, {"secret": 6})
            done: list[float] = []
            napper = threading.Thread(
                target=lambda: done.append(
                    bool(_call(c, slow, {"name": "nap", "input": {"seconds": 3}}))
                ),
            )
            napper.start()
            wait_until(lambda: SlowGuessEnv.napping, timeout=10, what="the nap to start")
            started = time.monotonic()
            assert _call(c, quick, {"name": "guess", "input": {"n": 6}})["output"]["finished"]
            assert time.monotonic() - started < 1.5 and not done, (
                "a napping session stalled another"
            )
            napper.join(timeout=15)
            assert done == [True]


def test_capacity_is_max_sessions_and_resumed_calls_never_step_twice() -> None:
    app = create_app(SlowGuessEnv, ors_wire=True, max_sessions=2)
    with run_server(app) as running, httpx.Client(base_url=running.url, timeout=10) as c:
        first, _second = _open(c, {"secret": 7}), _open(c, {"secret": 8})
        extra = _lease(c)
        body = {"task_spec": {"reset": {"secret": 1}}}
        _structured(
            c.post("/create", json=body, headers={"X-Session-ID": extra}), 503, "CAPACITY_REACHED"
        )
        c.post("/delete", headers={"X-Session-ID": first})
        assert c.post("/create", json=body, headers={"X-Session-ID": extra}).status_code == 200
        # A client retrying with the call's task_id gets the same answer, not a second step.
        once = _call(c, extra, {"name": "guess", "input": {"n": 5}})
        again = _call(c, extra, {"name": "guess", "input": {"n": 5}, "task_id": once["task_id"]})
        assert again == once and once["output"]["metadata"]["result"]["guesses"] == 1
        later = _call(c, extra, {"name": "guess", "input": {"n": 5}})
        assert later["output"]["metadata"]["result"]["guesses"] == 2


def test_environment_failure_is_this_calls_stream_only() -> None:
    with run_server(create_app(CrashingRewardEnv, ors_wire=True)) as running:
        with ORS(base_url=running.url) as client:
            env = client.environment("CrashingRewardEnv")
            with env.session(task=Task("CrashingRewardEnv", {"reset": {"secret": 3}})) as s:
                with pytest.raises(RuntimeError, match="reward exploded"):
                    s.call_tool("explode", {})
                assert s.call_tool("guess", {"n": 3}).finished is True


def test_tokens_principals_and_origins() -> None:
    app = create_app(SlowGuessEnv, ors_wire=True, token="op-token", principals={"p-token": {}})
    with run_server(app) as running, httpx.Client(base_url=running.url, timeout=10) as c:
        for headers, status in [
            ({}, 401),
            ({"X-API-Key": "wrong"}, 401),
            ({"Authorization": "Bearer wrong"}, 401),
            ({"X-API-Key": "p-token"}, 403),
            ({"Authorization": "Bearer p-token"}, 403),
            ({"X-API-Key": "op-token", "Origin": "http://evil.example"}, 403),
        ]:
            _structured(c.post("/create_session", headers=headers), status)
            r = c.post(
                "/create", json={"split": "x", "index": 0}, headers={"X-Session-ID": "s", **headers}
            )
            _structured(r, status)
        _open(c, {"secret": 1}, **{"Authorization": "Bearer op-token"})
        assert c.get("/SlowGuessEnv/tools").status_code == 200  # listings are open, as /tasks
        with ORS(base_url=running.url, api_key="op-token") as client:
            env = client.environment("SlowGuessEnv")
            with env.session(task=GUESS) as s:
                assert s.call_tool("guess", {"n": 42}).reward == 1.0


@compat(
    ORS_CLIENT,
    "ors.client.ORS",
    "refused",
    "production mode serves no ORS wire: --ors-wire there is a usage error",
)
def test_production_mode_has_no_ors_wire() -> None:
    with pytest.raises(ValueError, match="simulation mode only"):
        ServerSettings(mode="production", ors_wire=True)
    with run_server(create_app(SlowGuessEnv, mode="production")) as running:
        r = httpx.post(f"{running.url}/create", json={}, headers={"X-Session-ID": "s"})
        assert r.status_code in (404, 405) and "error" in r.json()
    bad = subprocess.run(
        [*MCPGYM, "serve", "mcpgym.examples.guess:GuessEnv", "--ors-wire", "--mode", "production"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "simulation mode only" in bad.stderr, bad.stderr


def test_a_call_outlives_its_dropped_connection(guess_url: str) -> None:
    """The client drops the stream after `task_id`; its retry with that id gets the result."""
    with httpx.Client(base_url=guess_url, timeout=30) as c:
        sid = _open(c, {"secret": 4})
        body = {"name": "nap", "input": {"seconds": 1.0}}
        with c.stream("POST", "/call", json=body, headers={"X-Session-ID": sid}) as r:
            lines = r.iter_lines()
            assert next(lines) == "event: task_id"
            call_id = next(lines).removeprefix("data: ")
        # the connection is gone, the nap goes on; the retry waits for it and gets its answer
        resumed = _call(c, sid, {**body, "task_id": call_id})
        assert resumed["task_id"] == call_id and resumed["output"]["metadata"]["result"] == "rested"
        assert _call(c, sid, {"name": "guess", "input": {"n": 4}})["output"]["finished"] is True
