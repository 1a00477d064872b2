"""The ORS wire's sessions (`servers/ors/routes.py` serves them): request bodies, the registry of
sessions by `X-Session-ID`, and one tool call run as a step and streamed as ORS's SSE.

A call runs in a task of its own, so a client that drops the connection does not cancel it; the
session keeps every call's result until it ends, so that the client's retry with the call's
`task_id` is answered from the result (never a second step). Calls of one session run one at a
time, in order; other sessions never wait for them. Bounded: at most `MAX_QUEUED_CALLS` calls of
a session wait or run at once (one more is 429 `QUOTA_REACHED`), and past `KEPT_RESULT_BYTES` of
kept results the oldest give way to a note that the call ran (its retry is 410
`CALL_RESULT_DROPPED`, still never a second step). Session ids are minted by the server
(`/create_session`), never chosen by the client.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from mcpgym._hints import exception_text
from mcpgym.errors import ExecutionError, MCPGymError, QuotaReached, SessionError
from mcpgym.runtime import crashes
from mcpgym.servers import wire_json
from mcpgym.servers.dispatch import capped
from mcpgym.servers.ors.mapping import sse_event, sse_result, tool_output
from mcpgym.servers.sessions import Session
from mcpgym.types import CallToolAction, CallToolObservation

__all__ = [
    "KEEPALIVE_S",
    "KEPT_RESULT_BYTES",
    "MAX_QUEUED_CALLS",
    "SID_CHARS",
    "CallBody",
    "CallResultDropped",
    "CreateBody",
    "LeaseBody",
    "OrsSession",
    "Registry",
    "SessionDeleted",
    "UnknownSession",
    "run_call",
    "start_call",
    "stream_call",
]

KEEPALIVE_S = 10.0
"""SSE comment interval while a call runs (the clients give up after 30 s of silence)."""
MAX_QUEUED_CALLS = 8
"""The most calls of one session that may wait or run at once (each holds its request body)."""
KEPT_RESULT_BYTES = 16 * 1024 * 1024
"""The most bytes of finished results a session keeps for retries; older ones are dropped."""
_DROPPED_KEPT = 65_536  # ids of calls whose result was dropped, remembered per session
_GONE_KEPT = 4096  # deleted session ids remembered, to answer 410 rather than 404
_MINTED_KEPT = 4096  # ids minted by /create_session and not yet used by /create
SID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:")


class UnknownSession(SessionError):
    """No ORS session has this `X-Session-ID` (never created, or reaped)."""

    code = "SESSION_NOT_FOUND"
    http_status = 404


class SessionDeleted(SessionError):
    """The session was deleted."""

    code = "SESSION_DELETED"
    http_status = 410


class CallResultDropped(SessionError):
    """The call ran, but its result is no longer kept (the session kept newer ones)."""

    code = "CALL_RESULT_DROPPED"
    http_status = 410


class CreateBody(BaseModel):
    """`POST /create`: ORS's `CreateSession` (and openreward's `toolset_name`, refused)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    env_name: str | None = None
    task_spec: dict[str, Any] | None = None
    split: str | None = None
    index: int | None = None
    secrets: dict[str, str] | None = None  # ORS passes these to its class; mcpgym has no use
    toolset_name: str | None = None  # openreward's built-in toolsets: a platform feature

    @model_validator(mode="after")
    def _one_task(self) -> CreateBody:
        by_index = self.split is not None or self.index is not None
        if (self.task_spec is not None) == by_index or (
            by_index and None in (self.split, self.index)
        ):
            raise ValueError("give either task_spec, or split and index")
        if self.toolset_name is not None:
            raise ValueError("toolset_name (openreward's built-in toolsets) is not served here")
        return self


class LeaseBody(BaseModel):
    """`POST /create_session`: empty for ORS; openreward may send `env` overrides (refused)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    env: dict[str, str] | None = None  # openreward's container env overrides
    task_id: str | None = None  # the clients' SSE retry adds it

    @model_validator(mode="after")
    def _no_env(self) -> LeaseBody:
        if self.env:
            raise ValueError("env overrides (an openreward platform feature) are not served here")
        return self


class CallBody(BaseModel):
    """`POST /{env}/call`: ORS's `ToolCall`."""

    model_config = ConfigDict(extra="forbid", strict=True)
    name: str
    input: dict[str, Any]
    task_id: str | None = None


@dataclass(eq=False)
class OrsSession:
    """One ORS session: its mcpgym session, its prompt, its recent calls."""

    sid: str
    session: Session
    prompt: list[dict[str, Any]]
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    calls: OrderedDict[str, asyncio.Task[str]] = field(default_factory=OrderedDict)
    dropped: OrderedDict[str, None] = field(default_factory=OrderedDict)
    kept_bytes: int = 0

    def pending(self) -> int:
        """Calls of this session still waiting or running."""
        return sum(1 for task in self.calls.values() if not task.done())

    def call(self, call_id: str) -> asyncio.Task[str] | None:
        """The call `call_id` of this session; `CallResultDropped` if its result was dropped."""
        task = self.calls.get(call_id)
        if task is None and call_id in self.dropped:
            raise CallResultDropped(
                f"call {call_id!r} ran, but its result is no longer kept: the session keeps "
                f"{KEPT_RESULT_BYTES} bytes of results; it was not run again",
                task_id=call_id,
            )
        return task

    def kept(self, task: asyncio.Task[str]) -> None:
        """Count a finished call's result, dropping the oldest ones past the budget."""
        if task.cancelled() or task.exception() is not None:
            return
        self.kept_bytes += len(task.result())
        for call_id, old in list(self.calls.items()):
            if self.kept_bytes <= KEPT_RESULT_BYTES:
                break
            if old.done() and old is not task:
                del self.calls[call_id]
                if not old.cancelled() and old.exception() is None:
                    self.kept_bytes -= len(old.result())
                self.dropped[call_id] = None
                while len(self.dropped) > _DROPPED_KEPT:
                    self.dropped.popitem(last=False)


class Registry:
    """The ORS sessions of one app, by session id."""

    def __init__(self) -> None:
        self.live: dict[str, OrsSession] = {}
        self.creating: set[str] = set()
        self.gone: OrderedDict[str, None] = OrderedDict()
        self.minted: OrderedDict[str, None] = OrderedDict()

    def mint(self) -> str:
        """A new session id for `/create_session` (random: never chosen by a client)."""
        sid = secrets.token_hex(16)
        self.minted[sid] = None
        while len(self.minted) > _MINTED_KEPT:
            self.minted.popitem(last=False)
        return sid

    def claim(self, sid: str) -> None:
        """Take a minted id for `/create`; `UnknownSession` for an id this server did not mint."""
        if sid in self.live or sid in self.creating:
            raise SessionError(f"session {sid!r} already exists", sid=sid)
        if self.minted.pop(sid, "absent") == "absent":
            raise UnknownSession(
                f"no session id {sid!r} was handed out here: POST /create_session first, then "
                "/create with the id it answers",
                sid=sid,
            )

    def get(self, sid: str) -> OrsSession:
        found = self.live.get(sid)
        if found is not None:
            found.session.touch()
            return found
        if sid in self.gone:
            raise SessionDeleted(f"session {sid!r} was deleted", sid=sid)
        raise UnknownSession(f"no session {sid!r}: POST /create first", sid=sid)

    def forget(self, sid: str) -> OrsSession | None:
        ors = self.live.pop(sid, None)
        if ors is not None:
            for call in ors.calls.values():
                call.cancel()
            self.gone[sid] = None
            while len(self.gone) > _GONE_KEPT:
                self.gone.popitem(last=False)
        return ors


async def run_call(
    ors: OrsSession, call: CallBody, timeout_s: float | None, max_result_bytes: int | None
) -> str:
    """Run one tool call as a step of the session's episode; the ORS answer as JSON text."""
    async with ors.lock:  # calls of one session run one at a time, in order
        ors.session.busy += 1
        try:
            action = CallToolAction(tool_name=call.name, arguments=call.input)
            obs = await ors.session.env.astep(action, timeout_s=timeout_s)
        finally:
            ors.session.busy -= 1
            ors.session.touch()
    if not isinstance(obs, CallToolObservation):
        raise ExecutionError(f"the environment answered a call with {type(obs).__name__}")
    try:
        return await wire_json.encode_reply(tool_output(await capped(obs, max_result_bytes)))
    except (TypeError, ValueError) as exc:
        raise ExecutionError(f"the step cannot be sent as JSON: {str(exc)[:200]}") from None


def _retrieve(task: asyncio.Task[str]) -> None:
    if not task.cancelled():
        task.exception()  # a call nobody waits for any more must not log "never retrieved"


def start_call(
    ors: OrsSession, call: CallBody, timeout_s: float | None, max_result_bytes: int | None
) -> tuple[str, asyncio.Task[str]]:
    """Start `call` in a task of its own (it outlives its connection); its id and the task.

    `QuotaReached` (429) when `MAX_QUEUED_CALLS` calls of the session wait or run already.
    """
    if ors.pending() >= MAX_QUEUED_CALLS:
        raise QuotaReached(
            f"this session has {MAX_QUEUED_CALLS} calls waiting or running, the most it may: "
            "wait for one to finish",
            quota=MAX_QUEUED_CALLS,
        )
    call_id = secrets.token_hex(12)
    task = asyncio.create_task(
        run_call(ors, call, timeout_s, max_result_bytes), name=f"mcpgym-ors-call-{call_id}"
    )
    task.add_done_callback(_retrieve)
    task.add_done_callback(ors.kept)
    ors.calls[call_id] = task
    return call_id, task


async def stream_call(call_id: str, task: asyncio.Task[str]) -> AsyncIterator[bytes]:
    yield sse_event("task_id", call_id)
    while not task.done():
        await asyncio.wait({task}, timeout=KEEPALIVE_S)  # never cancels the call
        if not task.done():
            yield b": keepalive\n\n"
    try:
        text = task.result()
    except asyncio.CancelledError:
        yield sse_event("error", wire_json.dumps(SessionDeleted("session deleted").to_dict()))
        return
    except MCPGymError as err:
        yield sse_event("error", wire_json.dumps(err.to_dict()))
        return
    except Exception as exc:  # the environment's bug: this call's stream only
        detail = crashes.record(None, "an ORS tool call", exc)
        err = ExecutionError(exception_text(exc), exception=type(exc).__name__, **detail)
        yield sse_event("error", wire_json.dumps(err.to_dict()))
        return
    for event in sse_result(text):
        yield event
