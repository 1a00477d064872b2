"""The one sans-IO dispatcher every transport calls: decode → dispatch → encode.

Transports hand it decoded requests (or raw WebSocket text) and a `Session`; it returns wire dicts.
It knows nothing of sockets or HTTP, so HTTP routes, WebSocket frames and tests share one path.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel

from mcpgym._hints import exception_text
from mcpgym.env import Environment
from mcpgym.errors import (
    ExecutionError,
    FrameTooLarge,
    InvalidRequest,
    MCPGymError,
    ResultTooLarge,
    SessionError,
    UnknownMessageType,
)
from mcpgym.mcp_env import MCPEnvironment
from mcpgym.runtime import crashes
from mcpgym.servers import wire_json
from mcpgym.servers.sessions import Session
from mcpgym.servers.wire_json import DEFAULT_MAX_RESULT_BYTES, check_result
from mcpgym.types import (
    CallToolObservation,
    ListToolsAction,
    ListToolsObservation,
    Observation,
    ToolErrorInfo,
)

__all__ = ["Dispatcher", "McpFrameHandler", "capped", "error_frame", "observation_payload"]

McpFrameHandler = Callable[[Session, dict[str, Any]], Awaitable[dict[str, Any] | None]]
_RESET_KEYS = ("seed", "episode_id")


def observation_payload(obs: Observation) -> dict[str, Any]:
    """OpenEnv's envelope: the observation's own fields, with reward and done beside it.

    An observation that carries a `wire_envelope` (one another library's server serialised, see
    `mcpgym.integrations.bridge.openenv_env`) is sent as that envelope, unchanged."""
    try:
        if type(obs) is CallToolObservation and not obs.metadata:
            # the hot path of every tool call: `result` is JSON already (ToolSpec.dump_result)
            error = obs.error
            body = {
                "metadata": {},
                "tool_name": obs.tool_name,
                "result": obs.result,
                "error": None if error is None else error.model_dump(mode="json"),
            }
        else:
            envelope = getattr(obs, "wire_envelope", None)
            if envelope is not None:  # serialised already, by the library that made it
                return envelope
            body = obs.model_dump(mode="json", exclude={"reward", "done"})
    except Exception as exc:
        raise ExecutionError(
            f"{type(obs).__name__} cannot be serialised to JSON: {exc}",
            exception=type(exc).__name__,
        ) from exc
    return {"observation": body, "reward": obs.reward, "done": obs.done}


def error_frame(err: MCPGymError, request_id: Any = None) -> dict[str, Any]:
    frame: dict[str, Any] = {"type": "error", "data": err.to_dict()}
    if request_id is not None:
        frame["id"] = request_id
    return frame


def _dump_state(state: Any) -> dict[str, Any]:
    if isinstance(state, BaseModel):
        return state.model_dump(mode="json")
    if isinstance(state, dict):
        return state  # type: ignore[return-value]
    raise TypeError(f"state must be a pydantic model, got {type(state).__name__}")


class Dispatcher:
    """Runs reset/step/state for a session and turns every failure into a structured error."""

    def __init__(
        self,
        *,
        max_frame_bytes: int,
        default_timeout_s: float | None = None,
        mcp_handler: McpFrameHandler | None = None,
        max_result_bytes: int | None = DEFAULT_MAX_RESULT_BYTES,
    ) -> None:
        self.max_frame_bytes = max_frame_bytes
        self.default_timeout_s = default_timeout_s
        self.mcp_handler = mcp_handler
        self.max_result_bytes = max_result_bytes

    # -- operations (shared by HTTP and WS) ------------------------------------------------------

    async def reset(self, session: Session, data: Any) -> dict[str, Any]:
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise InvalidRequest("reset data must be a JSON object", errors=[{"field": "data"}])
        kwargs = dict(data)
        seed = kwargs.pop("seed", None)
        episode_id = kwargs.pop("episode_id", None)
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise InvalidRequest("seed must be an integer", errors=[{"field": "seed", "got": seed}])
        if episode_id is not None and not isinstance(episode_id, str):
            raise InvalidRequest(
                "episode_id must be a string", errors=[{"field": "episode_id", "got": episode_id}]
            )
        obs = await session.env.areset(seed=seed, episode_id=episode_id, **kwargs)
        session.started = True
        return observation_payload(_check_obs(session.env, obs))

    async def step(
        self, session: Session, action_data: Any, timeout_s: Any = None
    ) -> dict[str, Any]:
        env = session.env
        action = env.parse_action(action_data)
        if not session.started:
            if isinstance(action, ListToolsAction) and isinstance(env, MCPEnvironment):
                # OpenEnv's MCP environments list tools before any reset, and clients rely on
                # it (verifiers' `openenv` taskset lists them first): a lookup, not a step.
                listed = ListToolsObservation(tools=[s.info for s in env.visible_tools()])
                return observation_payload(listed)
            raise SessionError("No episode: send reset before step.")
        timeout = self.default_timeout_s if timeout_s is None else _timeout(timeout_s)
        obs = await env.astep(action, timeout_s=timeout)
        if type(obs) is CallToolObservation:
            obs, small = await measured(obs, self.max_result_bytes)
            # A step reply's only unbounded parts are the result (measured just now), the
            # metadata and the error: when all are small the transport skips its own size walk.
            session.small_reply = small and not obs.metadata and obs.error is None
            return observation_payload(obs)
        return observation_payload(_check_obs(env, obs))

    def state(self, session: Session) -> dict[str, Any]:
        env = session.env
        try:
            return _dump_state(env.state)
        except MCPGymError:
            raise
        except Exception as exc:
            call = f"{type(env).__name__}.state"
            raise ExecutionError(
                f"{call} raised {type(exc).__name__}: {exc}",
                exception=type(exc).__name__,
                **crashes.record(env, call, exc),
            ) from exc

    # -- WebSocket frames ------------------------------------------------------------------------

    async def handle_text(
        self, session: Session, text: str | bytes
    ) -> tuple[dict[str, Any] | None, bool]:
        """Handle one WebSocket frame; returns (reply or None, close the connection after)."""
        request_id: Any = None
        kind: Any = None
        try:
            size = len(text)
            if isinstance(text, str) and size * 4 > self.max_frame_bytes:
                size = len(
                    text.encode("utf-8", "surrogatepass")
                )  # count bytes only when it matters
            if size > self.max_frame_bytes:
                raise FrameTooLarge(
                    f"frame of {size} bytes exceeds the limit of {self.max_frame_bytes}",
                    limit=self.max_frame_bytes,
                )
            msg = wire_json.loads(text, "frame")
            if not isinstance(msg, dict):
                raise InvalidRequest("frame must be a JSON object with a 'type'")
            request_id = msg.get("id")
            kind = msg.get("type")
            if kind == "step":
                reply = {
                    "type": "observation",
                    "data": await self.step(session, msg.get("data"), msg.get("timeout_s")),
                }
            elif kind == "reset":
                reply = {"type": "observation", "data": await self.reset(session, msg.get("data"))}
            elif kind == "state":
                reply = {"type": "state", "data": self.state(session)}
            elif kind == "close":
                return None, True
            elif kind == "mcp" and self.mcp_handler is not None:
                data = msg.get("data")
                if not isinstance(data, dict):
                    raise InvalidRequest("mcp data must be a JSON-RPC request object")
                response = await self.mcp_handler(session, data)
                if response is None:  # a notification: nothing to answer
                    return None, False
                reply = {"type": "mcp", "data": response}
            else:
                raise UnknownMessageType(
                    f"unknown message type {kind!r}; expected reset, step, state, close"
                    + (", mcp" if self.mcp_handler else ""),
                    got=kind,
                )
        except MCPGymError as err:
            return error_frame(err, request_id), False
        except Exception as exc:  # a bug in the environment or its models: this session only
            err = ExecutionError(
                exception_text(exc),
                exception=type(exc).__name__,
                **crashes.record(session.env, f"{type(session.env).__name__} ({kind!s})", exc),
            )
            return error_frame(err, request_id), False
        if request_id is not None:
            reply["id"] = request_id
        return reply, False


async def measured(obs: CallToolObservation, limit: int | None) -> tuple[CallToolObservation, bool]:
    """`capped(obs, limit)`, and whether its result is certainly small (`is_small`)."""
    if obs.result is None:
        return obs, True
    try:
        big = await check_result(obs.result, limit, obs.tool_name)
    except ResultTooLarge as err:
        too_large = CallToolObservation(
            tool_name=obs.tool_name,
            error=ToolErrorInfo(**err.to_info()),
            reward=obs.reward,
            done=obs.done,
            metadata=obs.metadata,
        )
        return too_large, False
    return obs, not big


async def capped(obs: CallToolObservation, limit: int | None) -> CallToolObservation:
    """`obs`, or (its result over `limit`) the same step answered with `RESULT_TOO_LARGE`."""
    return (await measured(obs, limit))[0]


MAX_TIMEOUT_S = 86_400.0
"""The longest per-call timeout a request may ask for (a day)."""


def _timeout(value: Any) -> float:
    # an int of any size compares with a float (10**400 <= MAX is False, no OverflowError)
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (isinstance(value, float) and not math.isfinite(value))  # NaN: "no timeout"
        or not 0 < value <= MAX_TIMEOUT_S
    ):
        got = value if not isinstance(value, int) or abs(value) < 10**18 else "a huge integer"
        raise InvalidRequest(
            f"timeout_s must be a positive number of seconds, at most {MAX_TIMEOUT_S:g}",
            errors=[{"field": "timeout_s", "got": got}],
        )
    return float(value)


def _check_obs(env: Environment[Any, Any, Any], obs: Any) -> Observation:
    if not isinstance(obs, Observation):
        raise ExecutionError(
            f"{type(env).__name__} returned {type(obs).__name__}, not an Observation"
        )
    return obs
