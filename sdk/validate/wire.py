"""A raw `/ws` session for the validator: frames as they are, every wait bounded.

The typed clients coerce what they receive (a `true` reward becomes `1.0`); the validator must see
the bytes the server sent, so this session returns decoded frames untouched and turns a silent,
closed or crashed server into a `WireError` with what happened. One `Session` is one server-side
environment instance, as for any client.

Example:
    >>> s = Session("http://127.0.0.1:8000", timeout=5.0)  # doctest: +SKIP
    >>> s.reset(seed=1)["type"]  # doctest: +SKIP
    'observation'
"""

from __future__ import annotations

import json
from typing import Any

from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI
from websockets.sync.client import ClientConnection, connect

from mcpgym.client._sync import _LEGACY
from mcpgym.types import Observation, StepResult

__all__ = ["Session", "WireError", "step_result"]


class WireError(Exception):
    """The server did not answer a frame properly (`kind`: timeout, closed, connect, bad_json)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class Session:
    """One WebSocket session on `base_url` (see the module docstring)."""

    def __init__(self, base_url: str, *, timeout: float = 10.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._ws: ClientConnection | None = None
        self._ids = 0

    def _conn(self) -> ClientConnection:
        if self._ws is None:
            url = "ws" + self.base_url.removeprefix("http") + "/ws"
            try:
                ws: ClientConnection = connect(
                    url,
                    open_timeout=self.timeout,
                    max_size=16 * 1024 * 1024,
                    compression=None,
                    **_LEGACY,  # the sync client's flag: no context-manager warning
                )
            except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as exc:
                # no URL in the message: ports change between runs, reports must not
                raise WireError("connect", f"cannot open the /ws session: {exc}") from None
            self._ws = ws
            return ws
        return self._ws

    def send_raw(self, text: str, timeout: float | None = None) -> dict[str, Any]:
        """Send one text frame and return the decoded reply (`WireError` on any failure)."""
        ws = self._conn()
        wait = self.timeout if timeout is None else timeout
        try:
            ws.send(text)
            reply = ws.recv(timeout=wait)
        except TimeoutError:
            raise WireError("timeout", f"no reply within {wait:g} s") from None
        except ConnectionClosed as exc:
            self._ws = None
            raise WireError("closed", f"the server closed the session ({exc})") from None
        try:
            data = json.loads(reply)
        except ValueError:
            raise WireError("bad_json", f"the reply is not JSON: {str(reply)[:200]!r}") from None
        if not isinstance(data, dict):
            raise WireError("bad_json", f"the reply is not a JSON object: {str(reply)[:200]!r}")
        return data

    def send(self, frame: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Send one frame (an `id` is added) and return the decoded reply."""
        self._ids += 1
        return self.send_raw(json.dumps({**frame, "id": f"v{self._ids}"}), timeout)

    def reset(self, timeout: float | None = None, **options: Any) -> dict[str, Any]:
        """A `reset` frame with `options` (seed, episode_id, ...)."""
        return self.send({"type": "reset", "data": options}, timeout)

    def step(
        self, action: dict[str, Any], timeout_s: float | None = None, grace: float = 5.0
    ) -> dict[str, Any]:
        """A `step` frame; with `timeout_s` the server bounds the step and we wait a grace more."""
        frame: dict[str, Any] = {"type": "step", "data": dict(action)}
        wait = None
        if timeout_s is not None:  # beside data, as the server's dispatcher reads it
            frame["timeout_s"] = timeout_s
            wait = timeout_s + grace
        return self.send(frame, wait)

    def call(
        self, tool: str, arguments: dict[str, Any], timeout_s: float | None = None
    ) -> dict[str, Any]:
        """A `call_tool` step."""
        action = {"type": "call_tool", "tool_name": tool, "arguments": arguments}
        return self.step(action, timeout_s)

    def state(self) -> dict[str, Any]:
        """A `state` frame."""
        return self.send({"type": "state"})

    def mcp(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A JSON-RPC request inside the session (`{"type": "mcp"}`)."""
        self._ids += 1
        rpc = {"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params or {}}
        return self.send({"type": "mcp", "data": rpc})

    def close(self) -> None:
        """Close the connection (never raises)."""
        ws, self._ws = self._ws, None
        if ws is not None:
            try:
                ws.close()
            except Exception:  # closing a dead connection must not fail a check
                return


def step_result(frame: dict[str, Any]) -> StepResult[Observation]:
    """An `observation` frame as the typed `StepResult` agents receive (tool observations typed)."""
    from mcpgym.types import CallToolObservation, ListToolsObservation

    data = frame.get("data") or {}
    inner = dict(data.get("observation") or {})
    reward = data.get("reward")
    reward_f = float(reward) if isinstance(reward, int | float) else None
    done = bool(data.get("done", False))
    model: type[Observation] = Observation
    if "tools" in inner:
        model = ListToolsObservation
    elif "tool_name" in inner:
        model = CallToolObservation
    try:
        obs = model.model_validate({**inner, "reward": reward_f, "done": done})
    except Exception:
        obs = Observation.model_validate({"metadata": inner, "reward": reward_f, "done": done})
    return StepResult(observation=obs, reward=reward_f, done=done)
