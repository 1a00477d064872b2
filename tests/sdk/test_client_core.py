"""Unit tests of `ClientCore`, the I/O-free half of every client: no sockets, no event loop."""

from __future__ import annotations

import json
from typing import Any

import pytest

import mcpgym.client
from mcpgym.client import ClientCore, normalize_url
from mcpgym.errors import ClientError, RemoteError, RequestTimeout, ServerGone
from mcpgym.examples.guess import GuessState
from mcpgym.types import (
    AnyObservation,
    CallToolAction,
    CallToolObservation,
    ListToolsAction,
    ListToolsObservation,
    Observation,
    State,
)


class CountObs(Observation):
    count: int


def obs_reply(
    rid: str | None, inner: dict[str, Any], reward: float | None = None, done: bool = False
) -> str:
    frame: dict[str, Any] = {
        "type": "observation",
        "data": {"observation": inner, "reward": reward, "done": done},
    }
    if rid is not None:
        frame["id"] = rid
    return json.dumps(frame)


def test_all_names_are_exported() -> None:
    for name in mcpgym.client.__all__:
        assert getattr(mcpgym.client, name) is not None
    public = {n for n in vars(mcpgym.client) if not n.startswith("_")}
    assert public - {"generic"} == set(mcpgym.client.__all__)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("http://127.0.0.1:8000", "ws://127.0.0.1:8000/ws"),
        ("http://127.0.0.1:8000/", "ws://127.0.0.1:8000/ws"),
        ("https://envs.example.com", "wss://envs.example.com/ws"),
        ("ws://h:1", "ws://h:1/ws"),
        ("ws://h:1/ws", "ws://h:1/ws"),
        ("wss://h:1/ws/", "wss://h:1/ws"),
        ("HTTP://h:1", "ws://h:1/ws"),
        ("http://h:1/guess", "ws://h:1/guess/ws"),
        ("http://h:1/guess/ws?token=a", "ws://h:1/guess/ws?token=a"),
        ("localhost:8000", "ws://localhost:8000/ws"),
        ("  http://h:1  ", "ws://h:1/ws"),
    ],
)
def test_normalize_url(given: str, expected: str) -> None:
    assert normalize_url(given) == expected


@pytest.mark.parametrize("bad", ["ftp://h:1", "http://", "file:///tmp/x"])
def test_normalize_url_rejects(bad: str) -> None:
    with pytest.raises(ValueError, match="URL"):
        normalize_url(bad)


def test_frames_carry_unique_ids() -> None:
    core = ClientCore("http://h:1")
    requests = [core.reset(seed=1), core.step({"type": "list_tools"}), core.state(), core.close()]
    ids = [r.id for r in requests]
    assert len(set(ids)) == len(ids)
    for r in requests:
        frame = json.loads(r.text)
        assert frame["id"] == r.id
        assert frame["type"] == r.type
    assert json.loads(requests[2].text) == {"type": "state", "id": requests[2].id}


def test_reset_frame() -> None:
    core = ClientCore("http://h:1")
    assert json.loads(core.reset().text)["data"] == {}
    data = json.loads(core.reset(seed=3, episode_id="e1", low=1, high=9).text)["data"]
    assert data == {"seed": 3, "episode_id": "e1", "low": 1, "high": 9}


def test_step_frame_and_reply_timeout() -> None:
    core = ClientCore("http://h:1", timeout=5.0)
    req = core.step(CallToolAction(tool_name="guess", arguments={"n": 5}), timeout_s=2.0)
    frame = json.loads(req.text)
    assert frame["timeout_s"] == 2.0
    assert frame["data"] == {
        "type": "call_tool",
        "tool_name": "guess",
        "arguments": {"n": 5},
        "metadata": {},
    }
    assert req.timeout == 7.0  # the server's step limit plus the usual reply budget
    assert core.step(ListToolsAction()).timeout == 5.0
    assert "timeout_s" not in json.loads(core.step({"type": "list_tools"}).text)
    assert ClientCore("http://h:1", timeout=None).step({}, timeout_s=1.0).timeout is None


def test_dict_actions_are_validated_when_an_action_type_is_given() -> None:
    core = ClientCore("http://h:1", action_type=CallToolAction)
    assert json.loads(core.step({"tool_name": "x"}).text)["data"]["type"] == "call_tool"
    with pytest.raises(ValueError, match="tool_name"):
        core.step({"tool_name": ""})
    # without an action type a dict goes out unchanged
    assert json.loads(ClientCore("http://h:1").step({"a": 1}).text)["data"] == {"a": 1}


def test_mcp_frame_adds_jsonrpc_version() -> None:
    core = ClientCore("http://h:1")
    frame = json.loads(core.mcp({"id": 1, "method": "tools/list"}).text)
    assert frame["type"] == "mcp"
    assert frame["data"] == {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


def test_stale_replies_are_discarded() -> None:
    core = ClientCore("http://h:1")
    old, new = core.state(), core.state()
    stale = json.dumps({"type": "state", "id": old.id, "data": {}})
    assert core.receive(new, stale) is None
    # even a stale *error* is dropped rather than raised against the wrong request
    stale_error = json.dumps({"type": "error", "id": old.id, "data": {"code": "X", "message": ""}})
    assert core.receive(new, stale_error) is None
    fresh = core.receive(new, json.dumps({"type": "state", "id": new.id, "data": {}}))
    assert fresh is not None and fresh["id"] == new.id


def test_replies_without_id_are_accepted() -> None:
    core = ClientCore("http://h:1")
    frame = core.receive(core.state(), b'{"type":"state","data":{"step_count":2}}')
    assert frame is not None
    assert core.parse_state(frame).step_count == 2


def test_error_frame_becomes_remote_error() -> None:
    core = ClientCore("http://h:1")
    req = core.step({"type": "nope"})
    reply = {
        "type": "error",
        "id": req.id,
        "data": {
            "code": "VALIDATION_ERROR",
            "message": "invalid action",
            "errors": [{"field": "type"}],
        },
    }
    with pytest.raises(RemoteError) as info:
        core.receive(req, json.dumps(reply))
    err = info.value
    assert err.remote_code == "VALIDATION_ERROR"
    assert err.message == "invalid action"
    assert err.detail == {"errors": [{"field": "type"}]}
    assert str(err) == "VALIDATION_ERROR: invalid action"
    assert isinstance(err, ClientError)


def test_error_frame_without_data_still_raises() -> None:
    core = ClientCore("http://h:1")
    with pytest.raises(RemoteError) as info:
        core.receive(core.state(), '{"type":"error"}')
    assert info.value.remote_code == "UNKNOWN"


@pytest.mark.parametrize("garbage", ["not json", "[1, 2]", '"text"'])
def test_malformed_reply_is_a_client_error(garbage: str) -> None:
    core = ClientCore("http://h:1")
    with pytest.raises(ClientError, match="server at ws://h:1/ws"):
        core.receive(core.state(), garbage)


def test_observation_is_parsed_into_the_configured_model() -> None:
    core = ClientCore("http://h:1", observation_type=CountObs)
    req = core.step({"by": 1})
    frame = core.receive(req, obs_reply(req.id, {"count": 3}, reward=0.5, done=True))
    assert frame is not None
    result = core.parse_step(frame)
    assert isinstance(result.observation, CountObs)
    assert result.observation.count == 3
    assert (result.reward, result.done) == (0.5, True)
    # reward and done travel in the envelope and are mirrored onto the observation
    assert (result.observation.reward, result.observation.done) == (0.5, True)


def test_base_observation_recognises_tool_observations() -> None:
    core = ClientCore("http://h:1")
    tools = core.parse_step(json.loads(obs_reply(None, {"tools": [{"name": "a"}]})))
    assert isinstance(tools.observation, ListToolsObservation)
    assert tools.observation.tools[0].input_schema == {"type": "object"}
    call = core.parse_step(json.loads(obs_reply(None, {"tool_name": "a", "result": 1}, 1.0)))
    assert isinstance(call.observation, CallToolObservation)
    assert call.observation.result == 1
    plain = core.parse_step(json.loads(obs_reply(None, {"metadata": {"prompt": "go"}})))
    assert type(plain.observation) is Observation
    assert plain.observation.metadata == {"prompt": "go"}
    assert plain.reward is None


def test_any_servers_own_observation_fields_are_read() -> None:
    """An OpenEnv server's own fields (`openenv init`'s `echoed_message`): kept with the base
    model, and fields the caller's strict model does not know are left out, not an error."""
    reply = json.loads(obs_reply(None, {"metadata": {}, "echoed_message": "hi", "length": 2}, 0.2))
    obs = ClientCore("http://h:1").parse_step(reply).observation
    assert isinstance(obs, AnyObservation) and obs.echoed_message == "hi"  # type: ignore[attr-defined]
    assert obs.model_dump()["length"] == 2 and obs.reward == 0.2
    strict = ClientCore("http://h:1", observation_type=CountObs)
    with_extra = json.loads(obs_reply(None, {"count": 3, "echoed_message": "hi"}))
    assert strict.parse_step(with_extra).observation.count == 3


def test_tool_replies_parse_with_tool_models_whatever_the_configured_model() -> None:
    core = ClientCore("http://h:1", observation_type=CountObs)
    listed = json.loads(obs_reply(None, {"tools": [{"name": "a", "description": "d"}]}))
    assert [t.name for t in core.parse_list_tools(listed)] == ["a"]
    error = {"error_type": "tool_not_found", "message": "Unknown tool", "suggestions": ["a"]}
    called = json.loads(obs_reply(None, {"tool_name": "b", "result": None, "error": error}, -0.1))
    obs = core.parse_call_tool(called)
    assert obs.error is not None and obs.error.error_type == "tool_not_found"
    assert obs.reward == -0.1


def test_reply_that_does_not_fit_the_model_names_the_way_out() -> None:
    core = ClientCore("http://h:1", observation_type=CountObs)
    with pytest.raises(ClientError, match=r"does not fit CountObs.*GenericEnvClient") as info:
        core.parse_step(json.loads(obs_reply(None, {"count": "many"})))
    assert info.value.detail["model"] == "CountObs"


def test_unexpected_reply_type_is_a_client_error() -> None:
    core = ClientCore("http://h:1")
    with pytest.raises(ClientError, match="expected a 'observation' reply"):
        core.parse_step({"type": "state", "data": {}})
    with pytest.raises(ClientError, match="reward"):
        core.parse_step({"type": "observation", "data": {"observation": {}, "reward": "x"}})


def test_state_is_parsed_into_the_configured_model() -> None:
    core = ClientCore("http://h:1", state_type=GuessState)
    frame = {"type": "state", "data": {"episode_id": "e1", "step_count": 2, "guesses": [5, 7]}}
    state = core.parse_state(frame)
    assert isinstance(state, GuessState)
    assert state.guesses == [5, 7]
    # the base State keeps unknown fields, so any server's state is readable
    generic = ClientCore("http://h:1").parse_state({"type": "state", "data": {"x": 1}})
    assert isinstance(generic, State) and generic.model_extra == {"x": 1}


def test_dict_parsing_uses_no_model() -> None:
    core = ClientCore("http://h:1")
    frame = json.loads(obs_reply(None, {"anything": [1]}, reward=1, done=True))
    assert core.parse_step_dict(frame) == ({"anything": [1]}, 1.0, True)
    assert core.parse_state_dict({"type": "state", "data": {"k": "v"}}) == {"k": "v"}
    assert core.parse_mcp({"type": "mcp", "data": {"jsonrpc": "2.0", "id": 1}})["id"] == 1


def test_connection_bookkeeping() -> None:
    core = ClientCore("http://h:1")
    assert core.needs_connect()  # a fresh client connects on first use
    core.mark_open()
    assert not core.needs_connect() and core.is_open
    gone = core.gone("the server at {url} closed the connection", RuntimeError("code 1011"))
    assert isinstance(gone, ServerGone)
    assert str(gone) == "the server at ws://h:1/ws closed the connection: code 1011"
    with pytest.raises(ServerGone, match="call connect"):
        core.needs_connect()  # never a silent new session mid-episode
    core.mark_closed()
    with pytest.raises(ClientError, match="closed"):
        core.needs_connect()
    assert "closed by this client" in str(core.gone("the server at {url} closed the connection"))


def test_timeouts_name_the_request() -> None:
    core = ClientCore("http://h:1", timeout=0.5)
    err = core.timed_out(core.state())
    assert isinstance(err, RequestTimeout)
    assert "'state'" in str(err) and "0.5 s" in str(err) and "ws://h:1/ws" in str(err)
    assert "ws://h:1/ws" in str(core.connect_timed_out())
    rejected = core.handshake_rejected(403, RuntimeError("HTTP 403"))
    assert rejected.remote_code == "UNAUTHORIZED" and rejected.detail == {"status": 403}
    assert core.handshake_rejected(404, RuntimeError("x")).remote_code == "HTTP_404"
    # what the server's probes say decides the code (issue 28: not UNAUTHORIZED for a mismatch)
    ours = {"/health": {"status": "healthy", "mode": "simulation"}}
    assert core.handshake_rejected(403, RuntimeError("x"), ours).remote_code == "UNAUTHORIZED"
    prod = {"/health": {"status": "healthy", "mode": "production"}}
    assert core.handshake_rejected(404, RuntimeError("x"), prod).remote_code == "MODE_MISMATCH"
    ors_server = {"/health": {"status": "ok"}, "/list_environments": ["shop"]}
    mismatch = core.handshake_rejected(403, RuntimeError("x"), ors_server)
    assert mismatch.remote_code == "PROTOCOL_MISMATCH" and "shop" in mismatch.message
    other = {"/health": {"ok": True}, "/list_environments": None}
    assert core.handshake_rejected(403, RuntimeError("x"), other).remote_code == "PROTOCOL_MISMATCH"
    assert core.probe_urls == ["http://h:1/health", "http://h:1/list_environments"]
