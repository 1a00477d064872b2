"""Operator-opened episodes under a hostile model (issue 26, defects 1, 2, 12): a record is bounded
in bytes whatever the calls carry, errors never echo whole arguments, nothing a client sends
makes a later read of the record fail, and an episode id acts on its own episode only."""

from __future__ import annotations

import gc
import json
import platform
import sys
import time
import weakref
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from helpers.hostile import mcp_call, mcp_initialize
from helpers.mcp import modern_call
from helpers.server import RunningServer, run_server
from mcpgym import MCPEnvironment, tool
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app
from mcpgym.servers.mcp import episodes

pytestmark = pytest.mark.server

BIG = "x" * (1024 * 1024)
POISON = ["NaN", "Infinity", "-Infinity", "1e999", "[" * 5000 + "]" * 5000]


@pytest.fixture(scope="module")
def guess() -> Iterator[RunningServer]:
    with run_server(create_app(GuessEnv)) as server:
        yield server


def _open(url: str) -> tuple[str, str]:
    reply = httpx.post(f"{url}/mcp/episodes", json={"reset": {"seed": 3}}, timeout=10)
    assert reply.status_code == 201, reply.text
    return reply.json()["episode"], url + reply.json()["url"]


def _record(url: str, episode: str, method: str = "GET") -> tuple[dict[str, Any], int]:
    reply = httpx.request(method, f"{url}/mcp/episodes/{episode}", timeout=30)
    assert reply.status_code == 200, reply.text[:300]
    return reply.json(), len(reply.content)


def test_huge_arguments_are_kept_as_a_marker_and_never_echoed(guess: RunningServer) -> None:
    episode, url = _open(guess.url)
    with httpx.Client(timeout=30) as client:
        headers = mcp_initialize(client, url)
        for args in ({"n": BIG}, {"n": 1, "extra": BIG}, {"n": [BIG] * 3}):
            answer = mcp_call(client, url, headers, "guess", args)["result"]
            assert answer["isError"] is True
            assert len(json.dumps(answer)) < 16_000, "the error echoes the arguments"
        body, headers2 = modern_call("guess", {"n": 2, "pad": BIG})
        assert client.post(url, json=body, headers=headers2).status_code == 200
    record, size = _record(guess.url, episode)
    assert record["steps"] == 4 and size < 4 * episodes.MAX_CALL_BYTES + 4096
    for call in record["calls"]:
        assert "truncated" in call["arguments"], call
        assert len(json.dumps(call)) <= 2 * episodes.MAX_CALL_BYTES


def test_a_record_stays_within_its_bound_whatever_the_calls(
    guess: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(episodes, "MAX_RECORD_BYTES", 16 * 1024)
    monkeypatch.setattr(episodes, "MAX_EPISODE_CALLS", 60)
    episode, url = _open(guess.url)
    kept = "y" * (episodes.MAX_CALL_BYTES - 100)  # each call just within what a call keeps
    with httpx.Client(timeout=30) as client:
        headers = mcp_initialize(client, url)
        for i in range(60):
            mcp_call(client, url, headers, "guess", {"n": 1, "pad": kept} if i % 2 else {"n": kept})
    record, size = _record(guess.url, episode, "DELETE")
    assert record["steps"] == 60
    bound = 16 * 1024 + 2 * episodes.MAX_CALL_BYTES + 60 * 256 + 4096  # RECORD_BOUND's terms
    assert size <= bound, size
    assert record["calls"][-1]["arguments"] == {"kept": False}  # the budget spent: compact
    assert record["calls"][-1]["error"] == {"error_type": "invalid_args"}


@pytest.mark.parametrize("poison", POISON, ids=["nan", "inf", "-inf", "1e999", "deep"])
def test_non_finite_or_deep_arguments_are_refused_and_not_stored(
    guess: RunningServer, poison: str
) -> None:
    episode, url = _open(guess.url)
    with httpx.Client(timeout=30) as client:
        headers = mcp_initialize(client, url)
        legacy = '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"guess",'
        reply = client.post(
            url, content=legacy + f'"arguments":{{"n":{poison}}}}}}}', headers=headers
        )
        assert reply.status_code == 400 and reply.json()["error"]["code"] == -32700, reply.text
        body, modern = modern_call("guess", {"n": 0})
        text = json.dumps(body).replace('"n": 0', f'"n": {poison}')
        reply = client.post(url, content=text, headers=modern)
        assert reply.status_code == 400 and reply.json()["error"]["code"] == -32700, reply.text
        assert mcp_call(client, url, headers, "guess", {"n": 4})["result"]["isError"] is False
    record, _ = _record(guess.url, episode)
    assert record["steps"] == 1  # only the good call
    closed, _ = _record(guess.url, episode, "DELETE")
    assert closed["live"] is False
    assert _record(guess.url, episode)[0]["steps"] == 1  # and readable ever after


class NanRewardEnv(MCPEnvironment):
    """A buggy reward: NaN for every step."""

    @tool
    def act(self) -> str:
        """Do something."""
        return "done"

    def reward(self, action: Any, observation: Any) -> float:
        return float("nan")


def test_a_reward_that_is_not_finite_fails_the_episode_readably() -> None:
    with run_server(create_app(NanRewardEnv)) as server:
        episode, url = _open(server.url)
        with httpx.Client(timeout=30) as client:
            headers = mcp_initialize(client, url)
            mcp_call(client, url, headers, "act", {})
        record, _ = _record(server.url, episode)
        assert record["failed"] and "finite" in record["failed"]
        assert record["calls"][0]["reward"] is None
        assert _record(server.url, episode, "DELETE")[0]["live"] is False


def test_an_episode_id_acts_on_its_own_episode_only(guess: RunningServer) -> None:
    _, url_a = _open(guess.url)
    _, url_b = _open(guess.url)
    plain = f"{guess.url}/mcp"
    with httpx.Client(timeout=30) as client:
        on_a = mcp_initialize(client, url_a)
        on_plain = mcp_initialize(client, plain)
        listing = {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}
        for url, foreign in ((url_b, on_a), (url_a, on_plain), (url_b, on_plain)):
            assert client.delete(url, headers=foreign).status_code == 404
            assert client.post(url, json=listing, headers=foreign).status_code == 404
            assert client.get(url, headers=foreign).status_code == 404
        # both sessions still live, each on its own instance
        assert mcp_call(client, url_a, on_a, "guess", {"n": 1})["result"]["isError"] is False
        assert mcp_call(client, plain, on_plain, "guess", {"n": 1})["result"]["isError"] is False
        assert client.delete(url_a, headers=on_a).status_code == 200  # its own: fine


def test_a_principal_cannot_use_another_principals_session() -> None:
    principals = {"tok-alice": {}, "tok-bob": {}}
    app = create_app(GuessEnv, mode="production", principals=principals)
    with run_server(app) as server, httpx.Client(timeout=30) as client:
        url = f"{server.url}/mcp"
        alice = mcp_initialize(client, url, Authorization="Bearer tok-alice")
        as_bob = {**alice, "Authorization": "Bearer tok-bob"}
        assert client.delete(url, headers=as_bob).status_code == 404
        assert mcp_call(client, url, alice, "guess", {"n": 1})["result"]["isError"] is False


def test_all_records_together_are_bounded(
    guess: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import secrets

    # records are kept deflated: arguments that do not deflate, so each record weighs ~3 KiB
    monkeypatch.setattr(episodes, "MAX_KEPT_BYTES", 2 * episodes.MAX_CALL_BYTES)
    opened = []
    with httpx.Client(timeout=30) as client:
        for _ in range(4):
            episode, url = _open(guess.url)
            headers = mcp_initialize(client, url)
            noise = secrets.token_urlsafe(episodes.MAX_CALL_BYTES // 2)[
                : episodes.MAX_CALL_BYTES - 50
            ]
            mcp_call(client, url, headers, "guess", {"n": noise})
            _record(guess.url, episode, "DELETE")
            opened.append(episode)
        _open(guess.url)  # opening sweeps: the oldest ended records made way
    gone = [e for e in opened if httpx.get(f"{guess.url}/mcp/episodes/{e}").status_code == 404]
    assert gone and gone == opened[: len(gone)] and len(gone) < len(opened), gone


class _Tracked(GuessEnv):
    """A GuessEnv whose live instances are counted (weakly), with a payload worth freeing."""

    alive: weakref.WeakSet[_Tracked] = weakref.WeakSet()

    def __init__(self) -> None:
        super().__init__()
        self.payload = bytearray(256 * 1024)
        _Tracked.alive.add(self)


def test_an_ended_episode_keeps_its_record_but_not_its_instance() -> None:
    """Ended however (DELETE, reaped idle), an episode's record stays readable and its
    environment is freed: records outlive instances by `RECORD_TTL_S`, so a record that held
    its instance kept up to `MAX_RECORDS` environments alive (RSS +21 % after 10,000 episodes)."""
    app = create_app(_Tracked, idle_timeout_s=0.5, reap_interval_s=0.2)
    with run_server(app) as server, httpx.Client(timeout=30) as client:
        ended = []
        for n in range(6):
            episode, url = _open(server.url)
            headers = mcp_initialize(client, url)
            assert mcp_call(client, url, headers, "guess", {"n": 50})["result"]["isError"] is False
            if n % 2:  # half deleted by the operator, half left to the idle reaper
                _record(server.url, episode, "DELETE")
            ended.append(episode)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and len(_Tracked.alive):
            time.sleep(0.2)
            gc.collect()
        assert len(_Tracked.alive) == 0, f"{len(_Tracked.alive)} ended episodes kept their instance"
        for episode in ended:
            record, _ = _record(server.url, episode)
            assert record["live"] is False and record["steps"] == 1
            assert "guess" in record["tools"]


def test_the_reaper_gives_freed_memory_back_once_sessions_closed() -> None:
    """glibc keeps freed pages: after sessions end, the reaper collects and trims (in a worker
    thread), once per interval and only when something closed since the last time."""
    from mcpgym.runtime import heap

    app = create_app(GuessEnv, idle_timeout_s=0.3, reap_interval_s=0.2)
    sessions = app.state.sessions
    runs: list[bool] = []
    inner = sessions.release_memory

    async def counted() -> bool:
        ran = await inner()
        if ran:
            runs.append(ran)
        return ran

    sessions.release_memory = counted
    with run_server(app) as server:
        time.sleep(0.6)
        assert runs == [], "nothing closed yet: nothing to give back"
        for _ in range(3):
            _open(server.url)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not runs:
            time.sleep(0.1)
        assert runs, "the reaper never gave freed memory back"
        time.sleep(0.8)  # all three reaped by now
        settled = len(runs)
        time.sleep(0.8)
        assert len(runs) == settled, "it ran again with nothing closed"
    if sys.platform == "linux" and platform.libc_ver()[0] == "glibc":
        assert heap.release() is True  # malloc_trim was found and called


def test_a_settled_record_reads_as_it_did_live_and_is_kept_small() -> None:
    """Once nothing can change it, a record is kept as its JSON text: every read answers what
    the live episode answered, and 2,000 records of abandoned one-call episodes take a fraction
    of the live form's memory (the form that grew RSS +17.9 % over 10,000 abandoned episodes)."""
    import secrets
    import tracemalloc

    app = create_app(GuessEnv)
    with run_server(app) as server, httpx.Client(timeout=30) as client:
        episode, url = _open(server.url)
        headers = mcp_initialize(client, url)
        mcp_call(client, url, headers, "guess", {"n": 50})
        mcp_call(client, url, headers, "guess", {"n": "not a number"})  # a scored tool error
        live, _ = _record(server.url, episode)
        final, _ = _record(server.url, episode, "DELETE")
        again, _ = _record(server.url, episode)
        assert final == again == live | {"live": False}
        assert final["steps"] == 2 and final["calls"][1]["error"]
        # arguments nested to the request's depth limit sit deeper still in the record
        deep, deep_url = _open(server.url)
        deep_headers = mcp_initialize(client, deep_url)
        nested: Any = 1
        for _ in range(61):  # the request then nests 64 deep: the most it may
            nested = [nested]
        mcp_call(client, deep_url, deep_headers, "guess", {"n": nested})
        deep_final, _ = _record(server.url, deep, "DELETE")
        assert _record(server.url, deep)[0] == deep_final and deep_final["steps"] == 1
        registry = episodes.McpEpisodes.of(app.state.sessions)
        assert isinstance(registry.get(episode), episodes.Record)
        assert _record(server.url, episode, "DELETE")[0] == final  # idempotent on a record

    registry = episodes.McpEpisodes(app.state.sessions)

    def abandoned(n: int) -> None:
        for _ in range(n):
            ep = episodes.McpEpisode(id=secrets.token_urlsafe(24), reset={"seed": 1}, session=None)
            ep.tools = ["guess"]
            call = {"tool": "guess", "arguments": {"n": 50}, "error": None}
            ep.calls.append(call | {"reward": 0.0, "done": False})
            registry._episodes[ep.id] = ep  # pyright: ignore[reportPrivateUsage]
            registry._note_end(ep)  # pyright: ignore[reportPrivateUsage]

    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        abandoned(2000)
        per_record = (tracemalloc.get_traced_memory()[0] - before) / 2000
    finally:
        tracemalloc.stop()
    kept = registry._records, registry._episodes  # pyright: ignore[reportPrivateUsage]
    assert len(kept[0]) == 2000 and not kept[1]
    assert per_record < 450, f"{per_record:.0f} bytes per settled record (the live form: ~1,050)"
