"""The /ws endpoint in-process: OpenEnv frames, id echo, every bad-input class, sessions."""

import json
import random
from typing import Any

import pytest
from starlette.testclient import TestClient, WebSocketTestSession

from helpers.apps import ClientFactory
from helpers.envs import (
    BrokenStateEnv,
    CrashingRewardEnv,
    SlowGuessEnv,
    SyncCounter,
    UnserializableObservationEnv,
    recording,
)
from helpers.wait import wait_until
from helpers.ws import receive, receive_close, receive_frame, request
from mcpgym.examples.guess import GuessEnv


def secret_for(seed: int) -> int:
    return random.Random(seed).randint(1, 100)


def guess(n: int) -> dict[str, Any]:
    return {
        "type": "step",
        "data": {"type": "call_tool", "tool_name": "guess", "arguments": {"n": n}},
    }


def error(frame: dict[str, Any], code: str) -> dict[str, Any]:
    assert frame["type"] == "error", frame
    assert frame["data"]["code"] == code, frame
    assert frame["data"]["message"]
    return frame["data"]


def sessions(client: TestClient) -> int:
    return client.get("/health").json()["sessions"]


# -- the happy path --------------------------------------------------------------------------------


def test_openenv_episode(guess_client: TestClient) -> None:
    with guess_client.websocket_connect("/ws") as ws:
        first = request(ws, {"type": "reset", "data": {"seed": 5, "episode_id": "e1"}})
        assert first == {
            "type": "observation",
            "data": {
                "observation": {"metadata": {"prompt": "Guess the integer between 1 and 100."}},
                "reward": None,
                "done": False,
            },
        }
        tools = request(ws, {"type": "step", "data": {"type": "list_tools"}})["data"]
        assert sorted(t["name"] for t in tools["observation"]["tools"]) == ["guess", "hint"]
        wrong = secret_for(5) % 100 + 1
        miss = request(ws, guess(wrong))["data"]
        assert miss["observation"]["result"]["verdict"] in ("higher", "lower")
        assert (miss["reward"], miss["done"]) == (-0.01, False)
        hit = request(ws, guess(secret_for(5)))["data"]
        assert hit["observation"]["result"] == {"verdict": "correct", "guesses": 2}
        assert (hit["reward"], hit["done"]) == (1.0, True)
        state = request(ws, {"type": "state"})
        assert state["type"] == "state"
        assert state["data"]["episode_id"] == "e1"
        assert state["data"]["step_count"] == 3
        assert state["data"]["guesses"] == [wrong, secret_for(5)]
        assert state["data"]["solved"] is True


def test_binary_frames_are_accepted(guess_client: TestClient) -> None:
    with guess_client.websocket_connect("/ws") as ws:
        ws.send_bytes(json.dumps({"type": "reset", "data": {"seed": 1}}).encode())
        assert receive_frame(ws)["type"] == "observation"


@pytest.mark.parametrize("request_id", ["req-1", 7, {"n": 1}])
def test_id_is_echoed_on_every_reply(guess_client: TestClient, request_id: Any) -> None:
    with guess_client.websocket_connect("/ws") as ws:
        assert (
            request(ws, {"type": "step", "id": request_id, "data": {"type": "list_tools"}})["id"]
            == request_id
        )
        assert request(ws, {"type": "reset", "id": request_id})["id"] == request_id
        assert request(ws, {"type": "state", "id": request_id})["id"] == request_id
        assert request(ws, {**guess(1), "id": request_id})["id"] == request_id
        bad = request(ws, {"type": "dance", "id": request_id})
        assert bad["type"] == "error" and bad["id"] == request_id


def test_no_id_no_echo(guess_client: TestClient) -> None:
    with guess_client.websocket_connect("/ws") as ws:
        assert "id" not in request(ws, {"type": "reset"})
        assert "id" not in request(ws, {"type": "dance"})


def test_each_connection_has_its_own_environment(guess_client: TestClient) -> None:
    with guess_client.websocket_connect("/ws") as a, guess_client.websocket_connect("/ws") as b:
        request(a, {"type": "reset", "data": {"seed": 1, "episode_id": "a"}})
        request(b, {"type": "reset", "data": {"seed": 2, "episode_id": "b"}})
        request(a, guess(10))
        request(a, guess(20))
        request(b, guess(30))
        assert sessions(guess_client) == 2
        state_a = request(a, {"type": "state"})["data"]
        state_b = request(b, {"type": "state"})["data"]
        assert (state_a["episode_id"], state_a["guesses"]) == ("a", [10, 20])
        assert (state_b["episode_id"], state_b["guesses"]) == ("b", [30])
    wait_until(lambda: sessions(guess_client) == 0, what="sessions closed")


def test_step_timeout_from_the_frame_and_from_settings(make_client: ClientFactory) -> None:
    nap = {"type": "call_tool", "tool_name": "nap", "arguments": {"seconds": 5}}
    client = make_client(SlowGuessEnv)
    with client.websocket_connect("/ws") as ws:
        request(ws, {"type": "reset"})
        obs = request(ws, {"type": "step", "data": nap, "timeout_s": 0.05})["data"]["observation"]
        assert obs["error"]["error_type"] == "timeout"
    client = make_client(SlowGuessEnv, step_timeout_s=0.05)
    with client.websocket_connect("/ws") as ws:
        request(ws, {"type": "reset"})
        obs = request(ws, {"type": "step", "data": nap})["data"]["observation"]
        assert obs["error"]["error_type"] == "timeout"


def test_plain_environment_step_timeout_then_no_overlap(make_client: ClientFactory) -> None:
    factory, built = recording(SyncCounter)
    client = make_client(factory)
    with client.websocket_connect("/ws") as ws:
        request(ws, {"type": "reset"})
        env = built[-1]
        try:
            timed_out = request(ws, {"type": "step", "data": {"op": "block"}, "timeout_s": 0.05})
            assert error(timed_out, "EXECUTION_ERROR")["timeout_s"] == 0.05
            wait_until(env.entered_block.is_set, what="the timed-out step to be running")
            busy = error(request(ws, {"type": "step", "data": {"op": "inc"}}), "SESSION_ERROR")
            assert busy["call"] == "step" and "unusable until" in busy["message"]
        finally:
            env.gate.set()
        wait_until(lambda: env.overdue_call is None, what="the timed-out step to return")
        reply = request(ws, {"type": "step", "data": {"op": "inc"}})["data"]
        assert reply["observation"]["total"] == 2  # the timed-out step finished first
        assert env.max_active == 1


# -- bad input: a structured error, and the session keeps working ---------------------------------

BAD_FRAMES: list[tuple[str, str, str, str | None]] = [
    # (case, raw frame, code, field named in errors)
    ("malformed JSON", '{"type": "reset"', "INVALID_JSON", None),
    ("not JSON at all", "hello", "INVALID_JSON", None),
    ("frame not an object", "[1, 2, 3]", "VALIDATION_ERROR", None),
    ("unknown frame type", '{"type": "dance"}', "UNKNOWN_TYPE", None),
    ("no frame type", '{"data": {}}', "UNKNOWN_TYPE", None),
    ("mcp data not an object", '{"type": "mcp", "data": "tools/list"}', "VALIDATION_ERROR", None),
    (
        "action missing a field",
        '{"type": "step", "data": {"type": "call_tool"}}',
        "VALIDATION_ERROR",
        "tool_name",
    ),
    (
        "action field of the wrong type",
        '{"type": "step", "data": {"type": "call_tool", "tool_name": 5}}',
        "VALIDATION_ERROR",
        "tool_name",
    ),
    (
        "arguments of the wrong type",
        '{"type": "step", "data": {"type": "call_tool", "tool_name": "guess", "arguments": [1]}}',
        "VALIDATION_ERROR",
        "arguments",
    ),
    (
        "action with an extra field",
        '{"type": "step", "data": {"type": "list_tools", "verbose": true}}',
        "VALIDATION_ERROR",
        "verbose",
    ),
    (
        "unknown action type",
        '{"type": "step", "data": {"type": "dance"}}',
        "VALIDATION_ERROR",
        None,
    ),
    ("step without data", '{"type": "step"}', "VALIDATION_ERROR", None),
    ("reset data not an object", '{"type": "reset", "data": [1]}', "VALIDATION_ERROR", None),
    ("seed not an integer", '{"type": "reset", "data": {"seed": "1"}}', "VALIDATION_ERROR", "seed"),
    (
        "timeout_s not a positive number",
        '{"type": "step", "timeout_s": 0, "data": {"type": "list_tools"}}',
        "VALIDATION_ERROR",
        "timeout_s",
    ),
]


@pytest.mark.parametrize(
    ("frame", "code", "field"), [c[1:] for c in BAD_FRAMES], ids=[c[0] for c in BAD_FRAMES]
)
def test_bad_frame_gets_a_structured_error(
    guess_client: TestClient, frame: str, code: str, field: str | None
) -> None:
    with guess_client.websocket_connect("/ws") as ws:
        request(ws, {"type": "reset", "data": {"seed": 3}})
        ws.send_text(frame)
        data = error(receive_frame(ws), code)
        if field is not None:
            assert field in [e["field"] for e in data["errors"]], data
        # the session survives: the episode is intact and still playable
        assert request(ws, guess(secret_for(3)))["data"]["done"] is True
        assert request(ws, {"type": "state"})["data"]["step_count"] == 1


def test_step_before_reset_is_a_session_error(guess_client: TestClient) -> None:
    """Except `list_tools`: OpenEnv's MCP environments list tools before any reset and clients
    rely on it (verifiers' `openenv` taskset); it is a lookup, not a step."""
    with guess_client.websocket_connect("/ws") as ws:
        error(request(ws, guess(1)), "SESSION_ERROR")
        untyped = {"tool_name": "guess", "arguments": {"n": 1}}
        error(request(ws, {"type": "step", "data": untyped}), "SESSION_ERROR")
        listed = request(ws, {"type": "step", "data": {"type": "list_tools"}})
        assert listed["type"] == "observation"
        assert (listed["data"]["reward"], listed["data"]["done"]) == (None, False)
        assert [t["name"] for t in listed["data"]["observation"]["tools"]] == ["guess", "hint"]
        request(ws, {"type": "reset"})
        assert request(ws, {"type": "state"})["data"]["step_count"] == 0
        after = request(ws, {"type": "step", "data": {"type": "list_tools"}})
        assert after["data"]["observation"]["tools"] == listed["data"]["observation"]["tools"]


@pytest.fixture
def small_frames(make_client: ClientFactory) -> TestClient:
    return make_client(GuessEnv, max_frame_bytes=512)


def test_frame_over_the_size_limit(small_frames: TestClient) -> None:
    with small_frames.websocket_connect("/ws") as ws:
        request(ws, {"type": "reset", "data": {"seed": 3}})
        big = json.dumps({"type": "reset", "data": {"pad": "x" * 600}})
        assert error(request_raw(ws, big), "VALIDATION_ERROR")["limit"] == 512
        assert request(ws, guess(secret_for(3)))["data"]["done"] is True


def test_frame_size_limit_counts_bytes_not_characters(small_frames: TestClient) -> None:
    """The limit is in bytes: 300 two-byte characters are a 600+ byte frame."""
    with small_frames.websocket_connect("/ws") as ws:
        frame = json.dumps({"type": "reset", "data": {"pad": "é" * 300}}, ensure_ascii=False)
        assert len(frame) < 512 < len(frame.encode())
        error(request_raw(ws, frame), "VALIDATION_ERROR")


def request_raw(ws: WebSocketTestSession, text: str) -> dict[str, Any]:
    ws.send_text(text)
    return receive_frame(ws)


# -- environment failures: EXECUTION_ERROR for that session only -----------------------------------


@pytest.mark.parametrize(
    ("env", "crash", "ok"),
    [
        (CrashingRewardEnv, {"type": "call_tool", "tool_name": "explode"}, {"type": "list_tools"}),
        (SyncCounter, {"op": "boom"}, {"op": "inc"}),
    ],
    ids=["mcp-env-reward-raises", "plain-env-step-raises"],
)
def test_env_crash_is_an_execution_error_for_that_session_only(
    make_client: ClientFactory, env: Any, crash: dict[str, Any], ok: dict[str, Any]
) -> None:
    client = make_client(env)
    with client.websocket_connect("/ws") as victim, client.websocket_connect("/ws") as bystander:
        request(victim, {"type": "reset", "id": 1})
        request(bystander, {"type": "reset"})
        data = error(request(victim, {"type": "step", "data": crash}), "EXECUTION_ERROR")
        assert "RuntimeError" in data["message"]
        assert request(bystander, {"type": "step", "data": ok})["type"] == "observation"
        assert request(victim, {"type": "step", "data": ok})["type"] == "observation"
        assert sessions(client) == 2


def test_state_raising_is_an_execution_error_frame(make_client: ClientFactory) -> None:
    client = make_client(BrokenStateEnv)
    with client.websocket_connect("/ws") as ws:
        request(ws, {"type": "reset"})
        message = receive_after(ws, {"type": "state", "id": "s"})
        assert message["type"] == "websocket.send", f"the session was dropped: {message}"
        frame = json.loads(message["text"])
        assert error(frame, "EXECUTION_ERROR") and frame["id"] == "s"
        assert request(ws, {"type": "step", "data": {"op": "inc"}})["type"] == "observation"


def receive_after(ws: WebSocketTestSession, frame: dict[str, Any]) -> dict[str, Any]:
    ws.send_text(json.dumps(frame))
    return receive(ws)


def test_factory_raising_closes_cleanly_and_the_server_keeps_serving(
    make_client: ClientFactory,
) -> None:
    broken = {"on": False}

    def factory() -> GuessEnv:
        if broken["on"]:
            raise OSError("no more databases")
        return GuessEnv()

    client = make_client(factory)
    broken["on"] = True
    with client.websocket_connect("/ws") as ws:
        data = error(receive_frame(ws), "EXECUTION_ERROR")
        assert "no more databases" in data["message"] and data["exception"] == "OSError"
        assert receive_close(ws) == 1011
    assert sessions(client) == 0
    broken["on"] = False
    with client.websocket_connect("/ws") as ws:
        assert request(ws, {"type": "reset"})["type"] == "observation"


# -- capacity, closing, reaping --------------------------------------------------------------------


def test_capacity_reached(make_client: ClientFactory) -> None:
    client = make_client(GuessEnv, max_sessions=2)
    with client.websocket_connect("/ws") as a:
        with client.websocket_connect("/ws") as b:
            request(a, {"type": "reset"})
            request(b, {"type": "reset"})
            with client.websocket_connect("/ws") as c:
                data = error(receive_frame(c), "CAPACITY_REACHED")
                assert data["max_sessions"] == 2
                assert receive_close(c) == 1013
            assert request(a, {"type": "state"})["type"] == "state"
        wait_until(lambda: sessions(client) == 1, what="the closed session's slot to free")
        with client.websocket_connect("/ws") as c:
            assert request(c, {"type": "reset"})["type"] == "observation"


def test_close_frame_ends_the_session(make_client: ClientFactory) -> None:
    factory, built = recording(GuessEnv)
    client = make_client(factory)
    with client.websocket_connect("/ws") as ws:
        request(ws, {"type": "reset"})
        assert sessions(client) == 1
        ws.send_text(json.dumps({"type": "close"}))
        assert receive_close(ws) == 1000
    assert sessions(client) == 0
    assert built[-1]._started  # the session's own instance, not the probe
    assert len(built) == 2


def test_client_disconnect_closes_the_session(make_client: ClientFactory) -> None:
    factory, built = recording(SyncCounter)
    client = make_client(factory)
    with client.websocket_connect("/ws") as ws:
        request(ws, {"type": "reset"})
        env = built[-1]
        assert not env.closed
    wait_until(lambda: sessions(client) == 0, what="session count back to 0")
    wait_until(lambda: env.closed, what="env.close() to be called")


def test_idle_session_is_reaped(make_client: ClientFactory) -> None:
    factory, built = recording(SyncCounter)
    client = make_client(factory, idle_timeout_s=0.2, reap_interval_s=0.05)
    with client.websocket_connect("/ws") as ws:
        request(ws, {"type": "reset"})
        assert receive_close(ws, timeout=5.0) == 1001
        assert sessions(client) == 0
        wait_until(lambda: built[-1].closed, what="env.close() to be called")
    with client.websocket_connect("/ws") as ws:  # the server still serves
        assert request(ws, {"type": "reset"})["type"] == "observation"


def test_busy_session_is_not_reaped(make_client: ClientFactory) -> None:
    client = make_client(SlowGuessEnv, idle_timeout_s=0.1, reap_interval_s=0.02)
    with client.websocket_connect("/ws") as ws:
        request(ws, {"type": "reset"})
        nap = {"type": "call_tool", "tool_name": "nap", "arguments": {"seconds": 0.4}}
        reply = request(ws, {"type": "step", "data": nap})
        assert reply["data"]["observation"]["result"] == "rested"


# -- an environment stuck in a timed-out sync step must not hold anything else up -----------------

BLOCK = {"type": "step", "data": {"op": "block"}, "timeout_s": 0.05}


def test_close_frame_after_a_step_timeout_closes_promptly(make_client: ClientFactory) -> None:
    factory, built = recording(SyncCounter)
    client = make_client(factory)
    with client.websocket_connect("/ws") as ws:
        request(ws, {"type": "reset"})
        env = built[-1]
        try:
            error(request(ws, BLOCK), "EXECUTION_ERROR")
            ws.send_text(json.dumps({"type": "close"}))
            assert receive_close(ws, timeout=2.0) == 1000
            assert sessions(client) == 0
        finally:
            env.gate.set()
    wait_until(lambda: env.closed, what="env.close() once the stuck step returned")
    assert env.max_active == 1  # close() still waited for the step


def test_a_stuck_environment_does_not_stall_reaping(make_client: ClientFactory) -> None:
    factory, built = recording(SyncCounter)
    client = make_client(factory, idle_timeout_s=0.3, reap_interval_s=0.05)
    with client.websocket_connect("/ws") as stuck:
        request(stuck, {"type": "reset"})
        env = built[-1]
        try:
            error(request(stuck, BLOCK), "EXECUTION_ERROR")
            with client.websocket_connect("/ws") as idle:  # goes idle after the stuck one
                request(idle, {"type": "reset"})
                assert receive_close(stuck, timeout=3.0) == 1001
                assert receive_close(idle, timeout=3.0) == 1001, (
                    "reaping stalled behind a stuck env"
                )
                assert sessions(client) == 0
        finally:
            env.gate.set()


def test_unserializable_observation_is_an_execution_error_frame(make_client: ClientFactory) -> None:
    client = make_client(UnserializableObservationEnv)
    with client.websocket_connect("/ws") as ws:
        request(ws, {"type": "reset"})
        message = receive_after(ws, {"type": "step", "id": 9, "data": {"op": "boom"}})
        assert message["type"] == "websocket.send", f"the session was dropped: {message}"
        frame = json.loads(message["text"])
        assert error(frame, "EXECUTION_ERROR") and frame["id"] == 9
        assert request(ws, {"type": "step", "data": {"op": "inc"}})["type"] == "observation"
