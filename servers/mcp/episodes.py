"""Operator-opened `/mcp` episodes (simulation mode): reset by the operator, played over spec MCP.

A spec MCP client chooses nothing about its episode: simulation `/mcp` gives each connection a
fresh instance reset with no options. A trainer that lets a model play over MCP needs the
episode *it* picked (a seed, a task by split and index) and, afterwards, that episode's reward.
So the operator opens the episode here and hands the model only a URL:

1. `POST /mcp/episodes {"reset": {...}}` (operator token) resets a fresh instance with those
   options, exactly as a `/ws` `reset` does (servers/mcp/episode_routes.py), and answers
   `{"episode": ID, "url": "/mcp?episode=ID", "observation": ...}`;
2. an MCP client on `/mcp?episode=ID` plays that instance: every request naming the episode, in
   either protocol era, on any connection, reaches the same instance. Each `tools/call` is a
   scored step, as a `/ws` `step` is (`MCPEnvironment.afinish_step`): the episode accumulates the
   rewards until `done`, after which calls are refused (an `isError` result) and not run;
3. `GET` / `DELETE /mcp/episodes/ID` read the record (reset options, the tools, every scored
   call with its reward, the summed `reward`, `done`); `DELETE` also closes the instance.

`ID` is 192 random bits (`secrets.token_urlsafe(24)`): a capability for playing that one episode
and nothing else. On a token-protected server it stands in for the bearer token on `/mcp` (MCP
tool-server configurations such as verifiers' carry a URL only); it can neither reset nor read
the reward, which need the operator token. Principal tokens cannot open episodes. Production has
no episodes at all: `/mcp?episode=` is refused there (400).

Instances count against the `/mcp` session quota and are reaped when idle like any session;
records of ended episodes stay readable for `RECORD_TTL_S`.

A record is bounded in bytes, whatever the model sends: a call keeps its arguments and its error
only when each is at most `MAX_CALL_BYTES` of JSON (else a marker with the size seen); once the
calls kept hold `MAX_RECORD_BYTES`, later calls keep only their tool, error type, reward and
done; and at most `MAX_EPISODE_CALLS` calls are made. So a record stays under `RECORD_BOUND`,
and all records together (live ones aside, which the session quota bounds) under
`MAX_KEPT_BYTES`: the oldest ended records go first.
Everything kept is strict JSON (a reward that is not a finite number fails the episode), so no
request can make a later read of the record fail.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
import weakref
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from math import isfinite
from typing import Any, NamedTuple

from mcpgym._hints import clip, exception_text
from mcpgym.errors import InvalidRequest, ToolError, ToolExecutionError
from mcpgym.mcp_env import MCPEnvironment
from mcpgym.runtime import crashes
from mcpgym.runtime.json_size import size_at_least
from mcpgym.servers import wire_json
from mcpgym.servers.mcp.episode_query import EpisodeQueryError
from mcpgym.servers.sessions import Session, SessionManager
from mcpgym.types import CallToolAction, CallToolObservation, Observation, ToolErrorInfo

__all__ = [
    "MAX_CALL_BYTES",
    "MAX_EPISODE_CALLS",
    "MAX_KEPT_BYTES",
    "MAX_RECORDS",
    "MAX_RECORD_BYTES",
    "RECORD_BOUND",
    "RECORD_TTL_S",
    "McpEpisode",
    "McpEpisodes",
    "Record",
]

RECORD_TTL_S = 900.0
"""How long an ended episode's record stays readable."""
MAX_RECORDS = 10_000
"""The most records kept; the oldest ended ones go first."""
MAX_EPISODE_CALLS = 10_000
"""The most scored calls one episode records; later calls are refused (the record is bounded)."""
MAX_CALL_BYTES = 4096
"""The most JSON a call keeps of its arguments, and of its error; beyond, a marker of the size."""
MAX_RECORD_BYTES = 1024 * 1024
"""Once an episode's kept calls hold this many bytes, later calls are kept compact."""
_COMPACT_BYTES = 256  # the most one compact call takes (tool names are the class's own)
RECORD_BOUND = MAX_RECORD_BYTES + 2 * MAX_CALL_BYTES + MAX_EPISODE_CALLS * _COMPACT_BYTES
"""The most bytes of JSON an episode's calls take in its record (about 3.5 MiB)."""
MAX_KEPT_BYTES = 256 * 1024 * 1024
"""The most bytes all records may hold; beyond, the oldest ended records go first."""


@dataclass(eq=False, slots=True)
class McpEpisode:
    """One operator-opened episode: its instance, and the record of its scored calls."""

    id: str
    reset: dict[str, Any]
    session: Session | None  # dropped once the episode ends: a record keeps no instance
    reset_reward: float | None = None
    calls: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    reward: float = 0.0
    done: bool = False
    failed: str | None = None
    ended_at: float | None = None
    kept_bytes: int = 0
    tools: list[str] = field(default_factory=list[str])  # the instance's tools when it ended
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def env(self) -> MCPEnvironment:
        """The live episode's instance (an `MCPEnvironment`: `McpEpisodes.open` checks)."""
        assert self.session is not None, "an ended episode keeps no instance"
        env = self.session.env
        assert isinstance(env, MCPEnvironment)
        return env

    @property
    def live(self) -> bool:
        """Whether MCP requests may still play it (not closed, not reaped)."""
        return self.session is not None and not self.session.closed

    @property
    def settled(self) -> bool:
        """Ended, and nothing can change its record any more (no call running or scored)."""
        return self.session is None and not self.lock.locked()

    def _tool_names(self) -> list[str]:
        if self.session is None:
            return self.tools
        return [spec.name for spec in self.env.visible_tools()]

    def record(self) -> dict[str, Any]:
        """The episode as JSON data: what the reward of the played episode is read from."""
        return {
            "episode": self.id,
            "reset": self.reset,
            "tools": self._tool_names(),
            "reset_reward": self.reset_reward,
            "steps": len(self.calls),
            "calls": list(self.calls),
            "reward": self.reward + (self.reset_reward or 0.0),
            "done": self.done,
            "failed": self.failed,
            "live": self.live,
        }


class Record(NamedTuple):
    """A settled episode's record, kept as its JSON text only, deflated when short (a one-call
    episode's takes about a third of the memory of the live form, so the records kept for
    `RECORD_TTL_S` after thousands of abandoned episodes cost little)."""

    text: bytes
    ended_at: float
    packed: bool

    @classmethod
    def of(cls, record: dict[str, Any]) -> Record:
        """The record of `record` (as `McpEpisode.record` answers it)."""
        text = wire_json.dumps(record).encode()
        if len(text) > _PACKED_MAX:  # rare and big: kept as text, not deflated on the loop
            return cls(text, time.monotonic(), False)
        packer = zlib.compressobj(6, zlib.DEFLATED, -12, 4, zlib.Z_DEFAULT_STRATEGY, _SHAPE)
        return cls(packer.compress(text) + packer.flush(), time.monotonic(), True)

    def record(self) -> dict[str, Any]:
        """The record as JSON data (as `McpEpisode.record` answered when it settled)."""
        text = self.text
        if self.packed:
            unpacker = zlib.decompressobj(-12, _SHAPE)
            text = unpacker.decompress(text) + unpacker.flush()
        # plain `json`: this is our own strict JSON, and its nesting is deeper than the request's
        # (a call's arguments nested to the request limit sit three levels down in it)
        return json.loads(text)


_PACKED_MAX = 16 * 1024
# what every record's JSON holds (a deflate dictionary: a one-call record deflates 253 → 64 bytes)
_SHAPE = (
    b'{"error_type":"","message":"","truncated":"not kept: "}{"episode":"","reset":{"seed":},'
    b'"tools":[],"reset_reward":null,"steps":1,"calls":[{"tool":"","arguments":{},"error":null,'
    b'"reward":0.0,"done":false}],"reward":0.0,"done":false,"failed":null,"live":false}'
)


_REGISTRIES: weakref.WeakKeyDictionary[SessionManager, McpEpisodes] = weakref.WeakKeyDictionary()


class McpEpisodes:
    """The app's operator-opened episodes, keyed by id (one registry per `SessionManager`):
    the live ones (and ended ones a call still holds), and the records of settled ones, oldest
    first."""

    def __init__(self, sessions: SessionManager) -> None:
        self._sessions = sessions
        self._episodes: dict[str, McpEpisode] = {}
        self._records: OrderedDict[str, Record] = OrderedDict()
        self._records_bytes = 0

    @classmethod
    def of(cls, sessions: SessionManager) -> McpEpisodes:
        """The registry of the app whose sessions are `sessions` (made on first use)."""
        found = _REGISTRIES.get(sessions)
        if found is None:
            found = _REGISTRIES[sessions] = cls(sessions)
        return found

    async def open(self, reset: dict[str, Any], session: Session) -> McpEpisode:
        """Register `session` (already reset with `reset`) as a new episode; returns it."""
        if not isinstance(session.env, MCPEnvironment):
            raise InvalidRequest("this environment has no tools to play over MCP")
        self._forget_old()
        episode = McpEpisode(id=secrets.token_urlsafe(24), reset=reset, session=session)
        episode.tools = episode._tool_names()  # pyright: ignore[reportPrivateUsage]
        self._scoring(episode)
        self._episodes[episode.id] = episode
        session.on_close = lambda: self._note_end(episode)  # closed, reaped or ended
        return episode

    def get(self, episode_id: str) -> McpEpisode | Record | None:
        """The episode with this id (live or ended) or its settled record, or `None`."""
        episode = self._episodes.get(episode_id)
        if episode is None:
            return self._records.get(episode_id)
        self._note_end(episode)
        return self._episodes.get(episode_id) or self._records.get(episode_id)

    def live(self, episode_id: str) -> McpEpisode:
        """The live episode an `/mcp` request names; `EpisodeQueryError` (404) otherwise."""
        episode = self.get(episode_id)
        if episode is None:
            raise EpisodeQueryError("unknown episode: open one with POST /mcp/episodes", 404)
        if not isinstance(episode, McpEpisode) or not episode.live:
            raise EpisodeQueryError(
                "the episode has ended (closed or reaped idle); its record stays readable "
                "at GET /mcp/episodes/ID",
                404,
            )
        assert episode.session is not None  # live
        episode.session.touch()  # an episode in play is not idle
        return episode

    async def end(self, episode_id: str) -> dict[str, Any] | None:
        """Close the episode's instance (idempotent), once a call still running is scored; its
        final record (`None` for an unknown id)."""
        episode = self.get(episode_id)
        if not isinstance(episode, McpEpisode):
            return None if episode is None else episode.record()
        async with episode.lock:  # a call still running finishes (and is scored) first
            if episode.session is not None:
                await self._sessions.close(episode.session)
            self._note_end(episode)
            final = episode.record()
        self._note_end(episode)  # settled now that the lock is free
        return final

    def _note_end(self, episode: McpEpisode) -> None:
        """Once the episode's session is closed: note when, and let go of its instance (the
        environment is freed once it closed); once settled, keep only its record's text."""
        if episode.ended_at is None and not episode.live:
            episode.ended_at = time.monotonic()
        if episode.session is not None and episode.session.closed:
            with contextlib.suppress(Exception):  # a closed instance may refuse: keep the last
                episode.tools = episode._tool_names()  # pyright: ignore[reportPrivateUsage]
            episode.session = None
        if episode.settled and self._episodes.pop(episode.id, None) is not None:
            record = self._records[episode.id] = Record.of(episode.record())
            self._records_bytes += len(record.text)

    def _forget_old(self) -> None:
        """Drop the records of episodes settled more than `RECORD_TTL_S` ago, and the oldest
        beyond `MAX_RECORDS` or `MAX_KEPT_BYTES` (live episodes are bounded by the session
        quota)."""
        for episode in list(self._episodes.values()):
            if episode.session is None or episode.session.closed:
                self._note_end(episode)
        live_bytes = sum(e.kept_bytes for e in self._episodes.values())
        now = time.monotonic()
        while self._records:
            oldest = next(iter(self._records.values()))
            full = len(self._episodes) + len(self._records) >= MAX_RECORDS
            heavy = live_bytes + self._records_bytes > MAX_KEPT_BYTES
            if not (full or heavy or now - oldest.ended_at > RECORD_TTL_S):
                break
            self._records_bytes -= len(self._records.popitem(last=False)[1].text)

    def _scoring(self, episode: McpEpisode) -> None:
        """Make every MCP `tools/call` on the episode's instance a scored step.

        Transports call `invoke_tool`; this instance's is wrapped (as the harness's episode
        server does): one call at a time, the step bookkeeping of `MCPEnvironment.astep` after
        it (`afinish_step`: step count, `done`, the rubric or `reward()`), refused once `done`.
        A question to the client (2026-07-28 `InputRequired`) ends the call without a step: the
        client calls again with the answer.
        """
        env = episode.env
        inner = env.invoke_tool

        async def invoke_tool(
            name: str, arguments: dict[str, Any] | None, timeout_s: float | None = None
        ) -> Any:
            from mcpgym.servers.mcp.context import InputRequired  # only ever called over MCP

            async with episode.lock:
                if episode.done or episode.failed:
                    raise ToolExecutionError(
                        "the episode is over (done): this call was not run", tool=name
                    )
                if len(episode.calls) >= MAX_EPISODE_CALLS:
                    raise ToolExecutionError(
                        f"the episode has made {MAX_EPISODE_CALLS} calls, the most it may: "
                        "this call was not run",
                        tool=name,
                    )
                args = dict(arguments or {})
                try:
                    value = await inner(name, arguments, timeout_s)
                except InputRequired:
                    raise
                except ToolError as err:
                    info = err.to_info()
                    obs = CallToolObservation(tool_name=name, error=ToolErrorInfo(**info))
                    await self._score(episode, env, name, args, obs, error=info)
                    raise
                obs = CallToolObservation(tool_name=name, result=value)
                await self._score(episode, env, name, args, obs, error=None)
                return value

        env.invoke_tool = invoke_tool  # type: ignore[method-assign]

    @staticmethod
    async def _score(
        episode: McpEpisode,
        env: MCPEnvironment,
        name: str,
        arguments: dict[str, Any],
        obs: Observation,
        error: dict[str, Any] | None,
    ) -> None:
        call = _kept_call(episode, name, arguments, error)
        try:
            scored = await env.afinish_step(
                CallToolAction(tool_name=name, arguments=arguments), obs
            )
            reward = scored.reward
            if reward is not None and not isfinite(reward):  # a bad type raises here too
                raise ValueError(f"the reward is {str(reward)[:40]}, not a finite number")
        except Exception as exc:  # a failing rubric fails the episode, not the model's call
            crashes.record(env, f"{type(env).__name__}.reward", exc)
            episode.failed = clip(f"the reward raised {exception_text(exc)}", 500)
            call |= {"reward": None, "done": False, "reward_error": episode.failed}
            episode.calls.append(call)
            return
        episode.calls.append(call | {"reward": reward, "done": scored.done})
        episode.reward += reward or 0.0
        episode.done = scored.done


def _kept_call(
    episode: McpEpisode, name: str, arguments: dict[str, Any], error: dict[str, Any] | None
) -> dict[str, Any]:
    """What the record keeps of one call, within the episode's byte budget."""
    tool = clip(name, 64)
    if episode.kept_bytes >= MAX_RECORD_BYTES:  # the budget is spent: the compact form
        kind = None if error is None else clip(str(error.get("error_type")), 32)
        episode.kept_bytes += _COMPACT_BYTES
        return {"tool": tool, "arguments": {"kept": False}, "error": kind and {"error_type": kind}}
    args, args_bytes = _kept(arguments)
    err: Any = None
    err_bytes = 0
    if error is not None:
        err, err_bytes = _kept(error)
        if "truncated" in err:  # the type and the start of the message still say what failed
            err = {
                "error_type": clip(str(error.get("error_type")), 32),
                "message": clip(str(error.get("message")), 500),
                "truncated": err["truncated"],
            }
            err_bytes = 600
    episode.kept_bytes += len(tool) + args_bytes + err_bytes + 64
    return {"tool": tool, "arguments": args, "error": err}


def _kept(value: Any) -> tuple[Any, int]:
    """`value` and its JSON size when it is strict JSON of at most `MAX_CALL_BYTES`, else a
    marker (`{"truncated": "..."}`) and the marker's size."""
    size = size_at_least(value, MAX_CALL_BYTES)
    if size <= MAX_CALL_BYTES:
        try:
            text = wire_json.dumps(value)
        except (TypeError, ValueError) as exc:
            note = f"not kept: not JSON ({clip(str(exc), 80)})"
            return {"truncated": note}, len(note) + 20
        if len(text) <= MAX_CALL_BYTES:
            return value, len(text)
        size = len(text)
    note = f"not kept: {size} bytes of JSON or more (the most kept is {MAX_CALL_BYTES})"
    return {"truncated": note}, len(note) + 20
