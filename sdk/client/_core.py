"""`ClientCore`: everything an environment client does that is not I/O.

Both twins (`EnvClient` over asyncio, `SyncEnvClient` over threads) and the generic dict clients
share this one object, so the wire protocol (DESIGN.md §5) is written down exactly once: it builds
request frames with correlation ids, normalises the server URL, matches replies to the pending
request (dropping stale ones), turns error frames into `RemoteError`, and parses payloads into the
configured pydantic models. The transports only move text frames and map socket failures.

Servers that do not echo request ids (OpenEnv 0.10.0, which also refuses any field it does not
know) are learnt from their first reply: a reply without `id`, or a refusal naming our `id` or
`timeout_s` as a forbidden extra field. From then on frames go without them (the refused request
is sent again, as `PlainFrames` tells the transport), and a timed-out call ends the connection,
since a late reply could no longer be told from the next one.

Example:
    >>> core = ClientCore("http://127.0.0.1:8000")
    >>> core.url
    'ws://127.0.0.1:8000/ws'
    >>> req = core.step({"type": "list_tools"})
    >>> reply = '{"type":"observation","id":"%s","data":{"observation":{"tools":[]},"done":false}}'
    >>> frame = core.receive(req, reply % req.id)
    >>> type(core.parse_step(frame).observation).__name__
    'ListToolsObservation'
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Generic, Literal

from pydantic import BaseModel, TypeAdapter
from pydantic import ValidationError as PydanticValidationError
from typing_extensions import TypeVar

from mcpgym.client._frames import EXTENSIONS, PlainFrames, Request, refuses_extensions, tool_value
from mcpgym.client._url import normalize_url, probe_urls, rejected_upgrade
from mcpgym.errors import ClientError, RemoteError, RequestTimeout, ServerGone
from mcpgym.types import (
    Action,
    AnyObservation,
    CallToolObservation,
    ListToolsObservation,
    Observation,
    State,
    StepResult,
    ToolInfo,
)

__all__ = [
    "DEFAULT_MAX_SIZE",
    "DEFAULT_TIMEOUT",
    "ActT",
    "ClientCore",
    "Frame",
    "ObsT",
    "PlainFrames",
    "Request",
    "StateT",
    "tool_value",
]

ActT = TypeVar("ActT", bound=Action, default=Action)
ObsT = TypeVar("ObsT", bound=Observation, default=Observation)
StateT = TypeVar("StateT", bound=State, default=State)
_M = TypeVar("_M", bound=BaseModel)

Frame = dict[str, Any]
"""One decoded JSON frame."""

DEFAULT_TIMEOUT = 30.0
"""Seconds to wait for the connection and for each reply."""

DEFAULT_MAX_SIZE = 16 * 2**20
"""Largest frame accepted from the server (16 MiB); observations can carry big tool results."""

_Status = Literal["idle", "open", "lost", "closed"]


_BASE_FIELDS = frozenset(Observation.model_fields)


class ClientCore(Generic[ObsT, StateT]):
    """The I/O-free half of every client: frames out, typed results in.

    Args:
        base_url: `http://host:port`, `ws://host:port` or either with a trailing `/ws`.
        observation_type: the model `reset`/`step` observations are parsed into. With the base
            `Observation`, tool observations become `ListToolsObservation`/`CallToolObservation`.
        state_type: the model `state` replies are parsed into.
        action_type: when given, dict actions are validated into it before they are sent.
        timeout: seconds to wait for the connection and each reply (`None`: no limit).
    """

    def __init__(
        self,
        base_url: str,
        *,
        observation_type: type[ObsT] = Observation,
        state_type: type[StateT] = State,
        action_type: type[Action] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> None:
        self.base_url = base_url
        self.url = normalize_url(base_url)
        self.observation_type = observation_type
        self.state_type = state_type
        self.action_type = action_type
        self.timeout = timeout
        self._ids = itertools.count(1)
        self._action_adapter = TypeAdapter(action_type) if action_type is not None else None
        self._status: _Status = "idle"
        self.echoes_ids: bool | None = None
        """Whether the server echoes request ids (`None` until its first reply says)."""

    # -- connection bookkeeping (the transports report, the core decides) -------------------------

    def needs_connect(self) -> bool:
        """Whether a request must open the connection first; raises if it may not.

        A fresh client connects on first use. After the connection was lost or the client was
        closed, a request fails instead of silently starting a new server session (which would
        lose the episode); `connect()` opens a new one explicitly.
        """
        if self._status == "idle":
            return True
        if self._status == "lost":
            raise ServerGone(
                f"the connection to {self.url} was lost; call connect() to start a new session",
                url=self.url,
            )
        if self._status == "closed":
            raise ClientError(f"the client for {self.url} is closed; call connect() to reopen it")
        return False

    def mark_open(self) -> None:
        self._status = "open"

    def mark_closed(self) -> None:
        self._status = "closed"

    @property
    def is_open(self) -> bool:
        return self._status == "open"

    # -- requests ---------------------------------------------------------------------------------

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Request:
        """A `reset` frame; `seed`/`episode_id` are sent only when given."""
        data: dict[str, Any] = {}
        if seed is not None:
            data["seed"] = seed
        if episode_id is not None:
            data["episode_id"] = episode_id
        data.update(kwargs)
        return self._request("reset", data)

    def step(self, action: Action | Mapping[str, Any], timeout_s: float | None = None) -> Request:
        """A `step` frame; `timeout_s` (the server-side step limit) extends the reply wait."""
        extra: dict[str, Any] = {}
        timeout = self.timeout
        if timeout_s is not None:
            extra["timeout_s"] = timeout_s
            timeout = None if timeout is None else timeout + timeout_s
        return self._request("step", self.dump_action(action), timeout=timeout, **extra)

    def state(self) -> Request:
        return self._request("state")

    def mcp(self, request: Mapping[str, Any]) -> Request:
        """An `mcp` frame carrying one JSON-RPC request (`"jsonrpc": "2.0"` is added if missing)."""
        return self._request("mcp", {"jsonrpc": "2.0", **request})

    def close(self) -> Request:
        """A `close` frame; the server ends the session and closes the socket."""
        return self._request("close")

    def dump_action(self, action: Action | Mapping[str, Any]) -> dict[str, Any]:
        """The wire form of an action (dicts are validated first when `action_type` is set)."""
        if isinstance(action, Mapping):
            if self._action_adapter is None:
                return dict(action)
            action = self._action_adapter.validate_python(action)
        return action.model_dump(mode="json")

    def _request(
        self,
        type_: str,
        data: Any = None,
        *,
        timeout: float | Literal["default"] | None = "default",
        **extra: Any,
    ) -> Request:
        rid = str(next(self._ids))
        frame: Frame = {"type": type_, "id": rid}
        if data is not None:
            frame["data"] = data
        frame.update(extra)
        if self.echoes_ids is False:
            frame = {k: v for k, v in frame.items() if k not in EXTENSIONS}
        return Request(
            id=rid,
            type=type_,
            text=json.dumps(frame, separators=(",", ":")),
            timeout=self.timeout if timeout == "default" else timeout,
            frame=frame,
        )

    def plain(self, request: Request) -> Request:
        """`request` without our extensions (`id`, `timeout_s`), for servers that refuse them."""
        frame = {k: v for k, v in (request.frame or {}).items() if k not in EXTENSIONS}
        return replace(request, text=json.dumps(frame, separators=(",", ":")), frame=frame)

    # -- replies ----------------------------------------------------------------------------------

    def receive(self, request: Request, message: str | bytes) -> Frame | None:
        """Decode one incoming frame for `request`.

        Returns the frame, or `None` for a stale reply (its `id` belongs to an earlier request that
        timed out on our side). A frame without `id` is accepted: servers that do not echo ids
        (OpenEnv) answer strictly in order. An error frame raises `RemoteError`.
        """
        try:
            frame = json.loads(message)
        except ValueError as exc:
            raise ClientError(
                f"the server at {self.url} sent a frame that is not JSON: {exc}"
            ) from None
        if not isinstance(frame, dict):
            raise ClientError(f"the server at {self.url} sent a non-object frame: {message!r:.200}")
        reply: Frame = frame
        rid = reply.get("id")
        if rid is not None and str(rid) != request.id:
            return None
        data = reply.get("data")
        if rid is None and self.echoes_ids is not False and "id" in (request.frame or ()):
            if reply.get("type") != "error":
                self.echoes_ids = False
            elif refuses_extensions(data):
                self.echoes_ids = False
                raise PlainFrames(self.plain(request))
        elif rid is not None:
            self.echoes_ids = True
        if reply.get("type") == "error":
            detail: dict[str, Any] = dict(data) if isinstance(data, dict) else {}
            code = str(detail.pop("code", "UNKNOWN"))
            message_ = str(detail.pop("message", "") or "(no message)")
            raise RemoteError(code, message_, **detail)
        return reply

    def parse_step(self, frame: Frame) -> StepResult[ObsT]:
        """An `observation` reply as a `StepResult` holding the configured observation model.

        `reward` and `done` come from the envelope and are also set on the observation.
        """
        inner, reward, done = self.parse_step_dict(frame)
        model: type[Observation] = self.observation_type
        if model is Observation:
            if "tools" in inner:
                model = ListToolsObservation
            elif "tool_name" in inner:
                model = CallToolObservation
                inner = self._tool_result(inner)
            elif not inner.keys() <= _BASE_FIELDS:  # an environment's own fields (`echoed_message`)
                model = AnyObservation
        elif model.model_config.get("extra") == "forbid":
            # a newer server may send fields the caller's model does not know: read the known
            inner = {k: v for k, v in inner.items() if k in model.model_fields}
        obs: Any = self._validate(model, inner, reward, done)
        return StepResult(observation=obs, reward=reward, done=done)

    def parse_list_tools(self, frame: Frame) -> list[ToolInfo]:
        """The tools of a `list_tools` step reply."""
        inner, reward, done = self.parse_step_dict(frame)
        return self._validate(ListToolsObservation, inner, reward, done).tools

    def parse_call_tool(self, frame: Frame) -> CallToolObservation:
        """The observation of a `call_tool` step reply, `reward` and `done` from the envelope."""
        inner, reward, done = self.parse_step_dict(frame)
        return self._validate(CallToolObservation, self._tool_result(inner), reward, done)

    def _tool_result(self, inner: dict[str, Any]) -> dict[str, Any]:
        """OpenEnv's server puts FastMCP's whole call result in `result`: keep the tool's value."""
        if self.echoes_ids is not False or not isinstance(inner.get("result"), dict):
            return inner
        return {**inner, "result": tool_value(inner["result"])}

    def parse_step_dict(self, frame: Frame) -> tuple[dict[str, Any], float | None, bool]:
        """An `observation` reply as `(observation dict, reward, done)`, without any model."""
        data = self._payload(frame, "observation")
        inner = data.get("observation")
        if inner is None:
            inner = {}
        if not isinstance(inner, dict):
            raise ClientError(f"observation from {self.url} is not an object: {inner!r:.200}")
        reward = data.get("reward")
        if reward is not None and not isinstance(reward, int | float):
            raise ClientError(f"reward from {self.url} is not a number: {reward!r:.200}")
        return inner, None if reward is None else float(reward), bool(data.get("done", False))

    def parse_state(self, frame: Frame) -> StateT:
        """A `state` reply as the configured state model."""
        return self._validate(self.state_type, self.parse_state_dict(frame))

    def parse_state_dict(self, frame: Frame) -> dict[str, Any]:
        return self._payload(frame, "state")

    def parse_mcp(self, frame: Frame) -> dict[str, Any]:
        """The JSON-RPC response of an `mcp` reply, as-is (a JSON-RPC error is data, not raised)."""
        return self._payload(frame, "mcp")

    def _payload(self, frame: Frame, expected: str) -> dict[str, Any]:
        if frame.get("type") != expected:
            raise ClientError(
                f"expected a {expected!r} reply from {self.url}, got {frame.get('type')!r}"
            )
        data = frame.get("data")
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise ClientError(f"the {expected!r} reply from {self.url} has non-object data")
        return data

    def _validate(
        self, model: type[_M], data: dict[str, Any], reward: float | None = None, done: bool = False
    ) -> _M:
        if issubclass(model, Observation):
            data = {**data, "reward": reward, "done": done}
        try:
            return model.model_validate(data)
        except PydanticValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(map(str, first["loc"])) or "top level"
            raise ClientError(
                f"the reply from {self.url} does not fit {model.__name__}: {first['msg']} at "
                f"{where}; pass the environment's own models (EnvClient.for_env) or use "
                "GenericEnvClient",
                model=model.__name__,
                errors=exc.errors(include_url=False, include_input=False),
            ) from None

    # -- failures the transports report ---------------------------------------------------------

    def gone(self, what: str, exc: BaseException | None = None) -> ServerGone:
        """A `ServerGone` saying `what` (`{url}` filled in); an open connection is marked lost."""
        if self._status == "open":
            self._status = "lost"
        elif self._status == "closed":  # close() ended a call still in flight
            what = "the connection to {url} was closed by this client"
        cause = f": {exc}" if exc is not None and str(exc) else ""
        return ServerGone(what.format(url=self.url) + cause, url=self.url)

    def timed_out(self, request: Request) -> RequestTimeout:
        """A `RequestTimeout` for `request`; the connection stays usable (late replies drop).

        With a server that does not echo ids a late reply cannot be recognised, so the
        connection is marked lost instead (the next call raises `ServerGone`).
        """
        lost = ""
        if self.echoes_ids is False and self._status == "open":
            self._status = "lost"
            lost = "; this server does not echo ids, so the connection was dropped"
        return RequestTimeout(
            f"no reply to {request.type!r} from {self.url} within {request.timeout} s{lost}",
            url=self.url,
            request=request.type,
            timeout=request.timeout,
        )

    def connect_timed_out(self) -> RequestTimeout:
        return RequestTimeout(
            f"could not connect to {self.url} within {self.timeout} s",
            url=self.url,
            timeout=self.timeout,
        )

    @property
    def probe_urls(self) -> list[str]:
        """What to read after a refused upgrade (`/health` names an mcpgym server's mode, ...)."""
        return probe_urls(self.url)

    def handshake_rejected(
        self, status: int, exc: BaseException, probe: dict[str, Any] | None = None
    ) -> RemoteError:
        """The server refused the WebSocket upgrade with an HTTP error (`rejected_upgrade`)."""
        return rejected_upgrade(self.url, status, exc, probe)
