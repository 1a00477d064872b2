"""Operator-opened `/mcp` episodes (simulation mode): reset by the operator, played over spec MCP.

A spec MCP client chooses nothing about its episode: simulation `/mcp` gives each connection a
fresh instance reset with no options. A trainer that lets a model play over MCP needs the
episode *it* picked (a seed, a task by split and index) and, afterwards, that episode's reward.
So the operator opens the episode here and hands the model only a URL:

1. `POST /mcp/episodes {"reset": {...}}` (operator token) resets a fresh instance with those
   options, exactly as a `/ws` `reset` does (servers/routes_mcp_episodes.py), and answers
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
"""

from __future__ import annotations

import asyncio
import re
import secrets
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from mcpgym.errors import InvalidRequest, ToolError, ToolExecutionError
from mcpgym.mcp_env import MCPEnvironment
from mcpgym.servers.sessions import Session, SessionManager
from mcpgym.types import CallToolAction, CallToolObservation, Observation, ToolErrorInfo

__all__ = [
    "EPISODE_PARAM",
    "MAX_EPISODE_CALLS",
    "MAX_RECORDS",
    "RECORD_TTL_S",
    "EpisodeQueryError",
    "McpEpisode",
    "McpEpisodes",
    "episode_query",
]

EPISODE_PARAM = "episode"
"""The `/mcp` query parameter naming an operator-opened episode."""
RECORD_TTL_S = 900.0
"""How long an ended episode's record stays readable."""
MAX_RECORDS = 10_000
"""The most records kept; the oldest ended ones go first."""
MAX_EPISODE_CALLS = 10_000
"""The most scored calls one episode records; later calls are refused (the record is bounded)."""
_ID = re.compile(r"[A-Za-z0-9_-]{32}")


class EpisodeQueryError(Exception):
    """The request's `episode` parameter is malformed (400) or names no live episode (404)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def episode_query(query_string: bytes | str) -> str | None:
    """The `episode` named by a query string, `None` when there is none.

    Raises `EpisodeQueryError` (400) for a repeated, empty or malformed value: a client that
    names an episode must name exactly one, or it would silently play a fresh one.
    """
    text = query_string.decode("latin-1") if isinstance(query_string, bytes) else query_string
    if EPISODE_PARAM not in text:  # the common case: no parsing at all
        return None
    values = parse_qs(text, keep_blank_values=True).get(EPISODE_PARAM)
    if values is None:
        return None
    if len(values) != 1:
        raise EpisodeQueryError("name one episode: `episode` is repeated", 400)
    if not _ID.fullmatch(values[0]):
        raise EpisodeQueryError(
            "`episode` is not an episode id: open one with POST /mcp/episodes", 400
        )
    return values[0]


@dataclass(eq=False)
class McpEpisode:
    """One operator-opened episode: its instance, and the record of its scored calls."""

    id: str
    reset: dict[str, Any]
    session: Session
    reset_reward: float | None = None
    calls: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    reward: float = 0.0
    done: bool = False
    failed: str | None = None
    ended_at: float | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def env(self) -> MCPEnvironment:
        """The episode's instance (an `MCPEnvironment`: `McpEpisodes.open` checks)."""
        env = self.session.env
        assert isinstance(env, MCPEnvironment)
        return env

    @property
    def live(self) -> bool:
        """Whether MCP requests may still play it (not closed, not reaped)."""
        return not self.session.closed

    def record(self) -> dict[str, Any]:
        """The episode as JSON data: what the reward of the played episode is read from."""
        return {
            "episode": self.id,
            "reset": self.reset,
            "tools": [spec.name for spec in self.env.visible_tools()],
            "reset_reward": self.reset_reward,
            "steps": len(self.calls),
            "calls": list(self.calls),
            "reward": self.reward + (self.reset_reward or 0.0),
            "done": self.done,
            "failed": self.failed,
            "live": self.live,
        }


_REGISTRIES: weakref.WeakKeyDictionary[SessionManager, McpEpisodes] = weakref.WeakKeyDictionary()


class McpEpisodes:
    """The app's operator-opened episodes, keyed by id (one registry per `SessionManager`)."""

    def __init__(self, sessions: SessionManager) -> None:
        self._sessions = sessions
        self._episodes: OrderedDict[str, McpEpisode] = OrderedDict()

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
        self._scoring(episode)
        self._episodes[episode.id] = episode
        return episode

    def get(self, episode_id: str) -> McpEpisode | None:
        """The episode with this id (live or ended), or `None`."""
        episode = self._episodes.get(episode_id)
        if episode is not None:
            self._note_end(episode)
        return episode

    def live(self, episode_id: str) -> McpEpisode:
        """The live episode an `/mcp` request names; `EpisodeQueryError` (404) otherwise."""
        episode = self.get(episode_id)
        if episode is None:
            raise EpisodeQueryError("unknown episode: open one with POST /mcp/episodes", 404)
        if not episode.live:
            raise EpisodeQueryError(
                "the episode has ended (closed or reaped idle); its record stays readable "
                "at GET /mcp/episodes/ID",
                404,
            )
        episode.session.touch()  # an episode in play is not idle
        return episode

    async def close(self, episode: McpEpisode) -> None:
        """Close the episode's instance (idempotent); its record stays readable."""
        await self._sessions.close(episode.session)
        self._note_end(episode)

    def _note_end(self, episode: McpEpisode) -> None:
        if episode.ended_at is None and not episode.live:
            episode.ended_at = time.monotonic()

    def _forget_old(self) -> None:
        """Drop records of episodes ended more than `RECORD_TTL_S` ago, and the oldest ended
        ones beyond `MAX_RECORDS` (live episodes are bounded by the session quota)."""
        now = time.monotonic()
        for episode in list(self._episodes.values()):
            self._note_end(episode)
        ended = [e for e in self._episodes.values() if e.ended_at is not None]
        excess = len(self._episodes) - MAX_RECORDS + 1
        for episode in ended:
            assert episode.ended_at is not None
            if now - episode.ended_at > RECORD_TTL_S or excess > 0:
                del self._episodes[episode.id]
                excess -= 1

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
            from mcpgym.servers.mcp_context import InputRequired  # only ever called over MCP

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
                    await self._score(episode, name, args, obs, error=info)
                    raise
                obs = CallToolObservation(tool_name=name, result=value)
                await self._score(episode, name, args, obs, error=None)
                return value

        env.invoke_tool = invoke_tool  # type: ignore[method-assign]

    @staticmethod
    async def _score(
        episode: McpEpisode,
        name: str,
        arguments: dict[str, Any],
        obs: Observation,
        error: dict[str, Any] | None,
    ) -> None:
        call: dict[str, Any] = {"tool": name, "arguments": arguments, "error": error}
        try:
            scored = await episode.env.afinish_step(
                CallToolAction(tool_name=name, arguments=arguments), obs
            )
        except Exception as exc:  # a failing rubric fails the episode, not the model's call
            episode.failed = f"the reward raised {type(exc).__name__}: {exc}"
            call |= {"reward": None, "done": False, "reward_error": episode.failed}
            episode.calls.append(call)
            return
        episode.calls.append(call | {"reward": scored.reward, "done": scored.done})
        episode.reward += scored.reward or 0.0
        episode.done = scored.done
