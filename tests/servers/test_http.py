"""HTTP routes in-process: /health /schema /metadata /reset /step /state, modes, and bad input."""

import json
import random
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from starlette.testclient import TestClient, WebSocketDenialResponse
from starlette.websockets import WebSocketDisconnect

from helpers.apps import ClientFactory
from helpers.envs import (
    BrokenStateEnv,
    SlowGuessEnv,
    SyncCounter,
    UnserializableObservationEnv,
    recording,
)
from helpers.ws import receive, receive_frame
from mcpgym.examples.guess import GuessEnv


def secret_for(seed: int, low: int = 1, high: int = 100) -> int:
    """GuessEnv draws its secret with `random.Random(seed).randint(low, high)`."""
    return random.Random(seed).randint(low, high)


def error_of(response: Any, status: int, code: str) -> dict[str, Any]:
    """Assert a structured error response and return its error object."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert error["code"] == code
    assert isinstance(error["message"], str) and error["message"]
    return error


# -- read-only routes ----------------------------------------------------------------------------


def test_health_reports_mode_and_no_sessions(guess_client: TestClient) -> None:
    response = guess_client.get("/health")
    assert response.status_code == 200
    body = response.json()
    assert set(body.pop("workers")) == {"size", "live", "idle", "queued", "slow", "detached"}
    assert body == {"status": "healthy", "mode": "simulation", "sessions": 0}


@pytest.mark.parametrize(
    ("mode", "tools"),
    [("simulation", ["guess", "hint"]), ("production", ["guess", "leaderboard"])],
)
def test_metadata_lists_the_tools_of_the_mode(
    make_client: ClientFactory, mode: str, tools: list[str]
) -> None:
    meta = make_client(GuessEnv, mode=mode).get("/metadata").json()
    assert meta["name"] == "GuessEnv"
    assert meta["version"] == "1.0.0"
    assert meta["mode"] == mode
    assert meta["description"] == GuessEnv.description
    assert sorted(meta["tools"]) == tools


def test_schema_describes_tool_actions_and_the_state(guess_client: TestClient) -> None:
    schema = guess_client.get("/schema").json()
    assert set(schema) == {"action", "observation", "state"}
    assert schema["action"]["title"] == "Action"  # how clients recognise the generic MCP action
    action = json.dumps(schema["action"])
    assert '"list_tools"' in action and '"call_tool"' in action
    assert {"episode_id", "step_count", "guesses", "low", "high"} <= set(
        schema["state"]["properties"]
    )
    assert {"done", "reward"} <= set(schema["observation"]["properties"])


def test_schema_of_a_plain_environment_is_its_action_model(make_client: ClientFactory) -> None:
    schema = make_client(SyncCounter).get("/schema").json()
    assert set(schema["action"]["properties"]) >= {"op", "by"}
    assert "total" in schema["observation"]["properties"]
    assert "total" in schema["state"]["properties"]


# -- reset / step / state ------------------------------------------------------------------------


def test_reset_returns_the_openenv_envelope(guess_client: TestClient) -> None:
    response = guess_client.post(
        "/reset", json={"seed": 1, "episode_id": "e1", "low": 5, "high": 9}
    )
    assert response.status_code == 200
    body = response.json()
    assert body["reward"] is None
    assert body["done"] is False
    assert body["observation"]["metadata"]["prompt"] == "Guess the integer between 5 and 9."
    assert "reward" not in body["observation"] and "done" not in body["observation"]


def test_reset_accepts_an_empty_body(guess_client: TestClient) -> None:
    assert guess_client.post("/reset").status_code == 200


def test_step_calls_a_tool_on_a_fresh_episode(guess_client: TestClient) -> None:
    n = secret_for(7)
    action = {"type": "call_tool", "tool_name": "guess", "arguments": {"n": n}}
    body = guess_client.post("/step", json={"action": action, "reset": {"seed": 7}}).json()
    assert body["observation"]["result"] == {"verdict": "correct", "guesses": 1}
    assert body["observation"]["error"] is None
    assert body["reward"] == 1.0
    assert body["done"] is True


def test_step_list_tools_shows_simulation_tools(guess_client: TestClient) -> None:
    body = guess_client.post("/step", json={"action": {"type": "list_tools"}}).json()
    tools = {t["name"]: t for t in body["observation"]["tools"]}
    assert sorted(tools) == ["guess", "hint"]
    assert tools["guess"]["input_schema"]["required"] == ["n"]


def test_a_failing_tool_is_data_not_an_http_error(guess_client: TestClient) -> None:
    action = {"type": "call_tool", "tool_name": "guess", "arguments": {"n": 1000}}
    response = guess_client.post("/step", json={"action": action})
    assert response.status_code == 200
    body = response.json()
    assert body["observation"]["error"]["error_type"] == "execution_error"
    assert "outside" in body["observation"]["error"]["message"]
    assert body["reward"] == -0.1


def test_http_is_stateless(guess_client: TestClient) -> None:
    action = {"type": "call_tool", "tool_name": "guess", "arguments": {"n": 50}}
    for _ in range(2):
        body = guess_client.post("/step", json={"action": action, "reset": {"seed": 3}}).json()
        assert body["observation"]["result"]["guesses"] == 1  # a fresh episode every request
    state = guess_client.get("/state").json()
    assert state["step_count"] == 0 and state["guesses"] == [] and state["episode_id"] is None
    assert guess_client.get("/health").json()["sessions"] == 0


def test_step_timeout_is_a_tool_timeout(make_client: ClientFactory) -> None:
    client = make_client(SlowGuessEnv)
    action = {"type": "call_tool", "tool_name": "nap", "arguments": {"seconds": 5}}
    body = client.post("/step", json={"action": action, "timeout_s": 0.05}).json()
    assert body["observation"]["error"]["error_type"] == "timeout"


def test_plain_environment_over_http(make_client: ClientFactory) -> None:
    client = make_client(SyncCounter)
    response = client.post("/step", json={"action": {"op": "inc", "by": 3}})
    assert response.status_code == 200, response.text
    assert response.json() == {
        "observation": {"total": 3, "metadata": {}},
        "reward": 3.0,
        "done": False,
    }


# -- environment failures: structured 5xx, the server keeps serving --------------------------------


def test_reset_raising_is_a_structured_execution_error(guess_client: TestClient) -> None:
    error = error_of(
        guess_client.post("/reset", json={"low": 9, "high": 1}), 500, "EXECUTION_ERROR"
    )
    assert error["exception"] == "ValueError"
    assert guess_client.post("/reset", json={}).status_code == 200


def test_factory_raising_is_a_structured_execution_error(make_client: ClientFactory) -> None:
    calls = {"n": 0}

    def factory() -> GuessEnv:
        calls["n"] += 1
        if calls["n"] > 1:  # the first call is the start-up probe
            raise OSError("database unreachable")
        return GuessEnv()

    client = make_client(factory)
    error = error_of(client.post("/reset", json={}), 500, "EXECUTION_ERROR")
    assert "database unreachable" in error["message"]
    assert client.get("/health").json()["sessions"] == 0


def test_state_raising_is_a_structured_execution_error(make_client: ClientFactory) -> None:
    client = make_client(BrokenStateEnv)
    error_of(client.get("/state"), 500, "EXECUTION_ERROR")


def test_unserializable_observation_is_a_structured_execution_error(
    make_client: ClientFactory,
) -> None:
    client = make_client(UnserializableObservationEnv)
    error_of(client.post("/step", json={"action": {"op": "boom"}}), 500, "EXECUTION_ERROR")


def test_step_timeout_is_504_without_waiting_for_the_stuck_step(make_client: ClientFactory) -> None:
    """A sync step that outlives `timeout_s` keeps its thread; the answer must not wait for it."""
    factory, built = recording(SyncCounter)
    client = make_client(factory)
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(
            client.post, "/step", json={"action": {"op": "block"}, "timeout_s": 0.05}
        )
        try:
            response = pending.result(timeout=3.0)
        except TimeoutError:
            pytest.fail("POST /step with timeout_s=0.05 did not answer within 3 s")
        finally:
            for env in built:
                env.gate.set()
    error = error_of(response, 504, "EXECUTION_ERROR")
    assert error["timeout_s"] == 0.05


def test_http_reset_over_capacity_is_503(make_client: ClientFactory) -> None:
    client = make_client(GuessEnv, max_sessions=1)
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset"})
        assert receive_frame(ws)["type"] == "observation"
        error_of(client.post("/reset", json={}), 503, "CAPACITY_REACHED")
    assert client.post("/reset", json={}).status_code == 200


# -- production mode -----------------------------------------------------------------------------


@pytest.fixture
def production_client(make_client: ClientFactory) -> TestClient:
    return make_client(GuessEnv, mode="production")


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/reset"), ("POST", "/step"), ("GET", "/state"), ("GET", "/schema")],
)
def test_production_has_no_simulation_routes(
    production_client: TestClient, method: str, path: str
) -> None:
    assert production_client.request(method, path, json={}).status_code == 404


def test_production_serves_health_and_metadata(production_client: TestClient) -> None:
    assert production_client.get("/health").json()["mode"] == "production"
    assert production_client.get("/metadata").status_code == 200


def test_production_has_no_ws(production_client: TestClient) -> None:
    with pytest.raises(WebSocketDisconnect), production_client.websocket_connect("/ws"):
        pass


def _ws_rejected(client: TestClient, headers: dict[str, str]) -> bool:
    """Whether /ws refuses the handshake, closes, or answers UNAUTHORIZED instead of serving."""
    try:
        with client.websocket_connect("/ws", headers=dict(headers)) as ws:
            ws.send_json({"type": "reset", "data": {"seed": 1}})
            message = receive(ws)
    except (WebSocketDisconnect, WebSocketDenialResponse):
        return True
    if message["type"] == "websocket.close":
        return True
    frame = json.loads(message["text"])
    return frame["type"] == "error" and frame["data"]["code"] == "UNAUTHORIZED"


@pytest.mark.parametrize(
    "settings",
    [{"mode": "production", "production_ws": True}, {"mode": "simulation"}],
    ids=["production_ws", "simulation"],
)
def test_ws_requires_the_bearer_token_when_one_is_set(
    make_client: ClientFactory, settings: dict[str, Any]
) -> None:
    """DESIGN.md §3 and ServerSettings.token: with a token set, /ws requires it."""
    client = make_client(GuessEnv, token="sekret", **settings)
    assert not _ws_rejected(client, {"Authorization": "Bearer sekret"})
    assert _ws_rejected(client, {}), "accepted without a token"
    assert _ws_rejected(client, {"Authorization": "Bearer wrong"}), "accepted a wrong token"


# -- bad input: structured errors with the right status, never a 500 ------------------------------

CALL = {"type": "call_tool", "tool_name": "guess", "arguments": {"n": 1}}

BAD_STEP_BODIES: list[tuple[str, bytes, int, str, str | None]] = [
    # (case, raw body, status, code, field named in errors)
    ("malformed JSON", b'{"action": {', 400, "INVALID_JSON", None),
    ("not UTF-8", b"\xff\xfe{}", 400, "INVALID_JSON", None),
    ("non-object body", b"[1, 2]", 422, "VALIDATION_ERROR", None),
    ("missing action", b"{}", 422, "VALIDATION_ERROR", "action"),
    (
        "extra field",
        json.dumps({"action": CALL, "bogus": 1}).encode(),
        422,
        "VALIDATION_ERROR",
        "bogus",
    ),
    ("action not an object", b'{"action": "guess"}', 422, "VALIDATION_ERROR", "action"),
    ("unknown action type", b'{"action": {"type": "dance"}}', 422, "VALIDATION_ERROR", None),
    (
        "wrong type in action",
        json.dumps({"action": {"type": "call_tool", "tool_name": 5}}).encode(),
        422,
        "VALIDATION_ERROR",
        "tool_name",
    ),
    (
        "extra field in action",
        json.dumps({"action": {**CALL, "priority": "high"}}).encode(),
        422,
        "VALIDATION_ERROR",
        "priority",
    ),
    (
        "missing field in action",
        json.dumps({"action": {"type": "call_tool"}}).encode(),
        422,
        "VALIDATION_ERROR",
        "tool_name",
    ),
    (
        "timeout not a number",
        json.dumps({"action": CALL, "timeout_s": "fast"}).encode(),
        422,
        "VALIDATION_ERROR",
        "timeout_s",
    ),
    (
        "negative timeout",
        json.dumps({"action": CALL, "timeout_s": -1}).encode(),
        422,
        "VALIDATION_ERROR",
        "timeout_s",
    ),
    (
        "reset seed not an int",
        json.dumps({"action": CALL, "reset": {"seed": "x"}}).encode(),
        422,
        "VALIDATION_ERROR",
        "seed",
    ),
]


@pytest.mark.parametrize(
    ("body", "status", "code", "field"),
    [case[1:] for case in BAD_STEP_BODIES],
    ids=[case[0] for case in BAD_STEP_BODIES],
)
def test_bad_step_body(
    guess_client: TestClient, body: bytes, status: int, code: str, field: str | None
) -> None:
    response = guess_client.post(
        "/step", content=body, headers={"content-type": "application/json"}
    )
    error = error_of(response, status, code)
    if field is not None:
        assert field in [e["field"] for e in error["errors"]], error
    assert guess_client.get("/health").json()["sessions"] == 0


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"{nope", 400, "INVALID_JSON"),
        (b'"just a string"', 422, "VALIDATION_ERROR"),
        (b'{"seed": true}', 422, "VALIDATION_ERROR"),
        (b'{"episode_id": 5}', 422, "VALIDATION_ERROR"),
    ],
    ids=["malformed JSON", "non-object body", "seed is a bool", "episode_id not a string"],
)
def test_bad_reset_body(guess_client: TestClient, body: bytes, status: int, code: str) -> None:
    response = guess_client.post(
        "/reset", content=body, headers={"content-type": "application/json"}
    )
    error_of(response, status, code)


@pytest.fixture
def small_client(make_client: ClientFactory) -> TestClient:
    return make_client(GuessEnv, max_frame_bytes=256)


@pytest.mark.parametrize("path", ["/reset", "/step"])
def test_body_over_the_limit_is_413(small_client: TestClient, path: str) -> None:
    body = json.dumps({"action": CALL, "reset": {"pad": "x" * 300}}).encode()
    error = error_of(small_client.post(path, content=body), 413, "VALIDATION_ERROR")
    assert error["limit"] == 256


def test_chunked_body_over_the_limit_is_413(small_client: TestClient) -> None:
    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit applies while reading
        yield b'{"pad": "'
        for _ in range(10):
            yield b"x" * 64
        yield b'"}'

    error = error_of(small_client.post("/reset", content=chunks()), 413, "VALIDATION_ERROR")
    assert error["limit"] == 256


def test_body_under_the_limit_is_accepted(small_client: TestClient) -> None:
    assert small_client.post("/step", json={"action": CALL}).status_code == 200
