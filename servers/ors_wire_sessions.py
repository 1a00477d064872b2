"""The ORS wire's sessions (`servers/ors_wire.py` serves them): request bodies, the registry of
sessions by `X-Session-ID`, and one tool call run as a step and streamed as ORS's SSE.

A call runs in a task of its own, so a client that drops the connection does not cancel it; the
session keeps its last calls so that the client's retry with the call's `task_id` is answered
from the result (never a second step). Calls of one session run one at a time, in order; other
sessions never wait for them.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from mcpgym.errors import ExecutionError, MCPGymError, SessionError
from mcpgym.servers import wire_json
from mcpgym.servers.ors_wire_map import sse_event, sse_result, tool_output
from mcpgym.servers.sessions import Session
from mcpgym.types import CallToolAction, CallToolObservation

__all__ = [
    "KEEPALIVE_S",
    "KEPT_CALLS",
    "SID_CHARS",
    "CallBody",
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
KEPT_CALLS = 8  # finished calls a session keeps for a client's resumed retry
_GONE_KEPT = 4096  # deleted session ids remembered, to answer 410 rather than 404
SID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:")


class UnknownSession(SessionError):
    """No ORS session has this `X-Session-ID` (never created, or reaped)."""

    code = "SESSION_NOT_FOUND"
    http_status = 404


class SessionDeleted(SessionError):
    """The session was deleted."""

    code = "SESSION_DELETED"
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


class Registry:
    """The ORS sessions of one app, by session id."""

    def __init__(self) -> None:
        self.live: dict[str, OrsSession] = {}
        self.creating: set[str] = set()
        self.gone: OrderedDict[str, None] = OrderedDict()

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


async def run_call(ors: OrsSession, call: CallBody, timeout_s: float | None) -> str:
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
        return wire_json.dumps(tool_output(obs))
    except (TypeError, ValueError) as exc:
        raise ExecutionError(f"the step cannot be sent as JSON: {str(exc)[:200]}") from None


def _retrieve(task: asyncio.Task[str]) -> None:
    if not task.cancelled():
        task.exception()  # a call nobody waits for any more must not log "never retrieved"


def start_call(
    ors: OrsSession, call: CallBody, timeout_s: float | None
) -> tuple[str, asyncio.Task[str]]:
    """Start `call` in a task of its own (it outlives its connection); its id and the task."""
    call_id = secrets.token_hex(12)
    task = asyncio.create_task(run_call(ors, call, timeout_s), name=f"mcpgym-ors-call-{call_id}")
    task.add_done_callback(_retrieve)
    ors.calls[call_id] = task
    while len(ors.calls) > KEPT_CALLS:
        ors.calls.popitem(last=False)
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
        err = ExecutionError(f"{type(exc).__name__}: {exc}", exception=type(exc).__name__)
        yield sse_event("error", wire_json.dumps(err.to_dict()))
        return
    for event in sse_result(text):
        yield event
