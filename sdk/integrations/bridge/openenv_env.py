"""`OpenEnvBridgeEnvironment`: an OpenEnv environment in a worker, answering OpenEnv's own wire.

OpenEnv's clients (`GenericEnvClient`, an `openenv init` typed client, `MCPToolClient`) read
what OpenEnv's `create_fastapi_app` sends. So here a `step` takes the client's raw action object
(`WireAction`: any JSON object), the worker reads it with the environment's own action class and
answers with OpenEnv's own `serialize_observation`, and the reply is that payload field for field
(`WireObservation` keeps every field, and its `wire_envelope` is what the servers send). `reset`
passes only what the client sent (the worker filters it by the signature of `reset`), and `state`
is the environment's own state.

The same environment's tools (an `MCPEnvironment`, or a plain one that answers MCP actions) are
also mcpgym tools on `/mcp`, whose results are the tool's value itself.

When the worker fails during an MCP tool action (it crashed, hung past a timeout, or is gone),
the step is answered as mcpgym answers a failed tool: a `CallToolObservation` whose `error` says
why, and the episode ends. A failure during any other action is the step's error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from pydantic import ConfigDict, PrivateAttr

from mcpgym.errors import (
    ExecutionError,
    InvalidRequest,
    StepTimeout,
    ToolError,
    ToolExecutionError,
    ToolTimeout,
)
from mcpgym.integrations.bridge.env import BridgeEnvironment, public_error, scrub
from mcpgym.integrations.bridge.inprocess import Worker
from mcpgym.integrations.bridge.process import WorkerError
from mcpgym.types import Action, CallToolObservation, Observation, State, ToolErrorInfo

__all__ = ["OpenEnvBridgeEnvironment", "WireAction", "WireObservation"]

_TOOL_ACTIONS = ("call_tool", "list_tools")


class WireAction(Action):
    """Any JSON object: an OpenEnv action, validated in the worker by the environment's class."""

    model_config = ConfigDict(extra="allow")


class WireObservation(Observation):
    """An observation exactly as OpenEnv's server serialised it (every field kept).

    `wire_envelope` is that server's whole `{"observation", "reward", "done", ...}` payload; the
    servers send it as it is, so every field OpenEnv's clients read is the library's own.
    """

    model_config = ConfigDict(extra="allow")

    _envelope: dict[str, Any] | None = PrivateAttr(default=None)

    @property
    def wire_envelope(self) -> dict[str, Any] | None:
        """The payload as the foreign server would have sent it (None: build it as usual)."""
        return self._envelope


class OpenEnvBridgeEnvironment(BridgeEnvironment):
    """The `openenv` bridge backend (configure with `bridge_environment("openenv", ...)`)."""

    action_type = WireAction
    observation_type = WireObservation
    wrap_results = False

    _foreign_state: dict[str, Any] | None = None

    def parse_action(self, data: Any) -> Any:
        if not isinstance(data, Mapping):
            raise InvalidRequest(
                "action must be a JSON object", errors=[{"field": "action", "got": data}]
            )
        return WireAction.model_validate(data)

    @property
    def state(self) -> State:
        if self._foreign_state is None:
            return super().state
        return State.model_validate(self._foreign_state)

    async def astep(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Any:
        raw = action.model_dump(exclude_unset=True) if isinstance(action, Action) else action
        if isinstance(action, Action) and "type" not in raw and "type" in type(action).model_fields:
            raw["type"] = action.type  # pyright: ignore[reportAttributeAccessIssue]  # an mcpgym tool action built in process
        tool = raw.get("type") in _TOOL_ACTIONS if isinstance(raw, dict) else False
        worker = self._worker
        try:
            if worker is None or not worker.alive:
                raise ToolExecutionError(
                    "the bridge worker is not running (reset to start a new one)",
                    tool=str(raw.get("tool_name") or "list_tools"),
                )
            limit = (
                self.call_timeout_s if timeout_s is None else min(timeout_s, self.call_timeout_s)
            )
            args = {"action": raw, "timeout_s": timeout_s}
            try:
                frame = await self._guarded(asyncio.to_thread(worker.request, "step", args, limit))
            except WorkerError as err:
                self.end_episode()
                public = public_error(err)
                cls = ToolTimeout if err.detail.get("reason") == "timeout" else ToolExecutionError
                name = str(raw.get("tool_name") or "step")
                raise cls(public.message, tool=name, **public.detail) from None
        except ToolError as err:
            self._stop_worker()
            if not tool:
                cls = StepTimeout if isinstance(err, ToolTimeout) else ExecutionError
                raise cls(err.message, **err.detail) from None
            name = str(raw.get("tool_name") or "list_tools")
            info = ToolErrorInfo(**err.to_info())
            return CallToolObservation(tool_name=name, error=info, done=True)
        if not frame["ok"]:
            error = frame.get("error") or {}
            message = scrub(str(error.get("message") or "the step failed"))
            if error.get("kind") == "invalid_args":
                raise InvalidRequest(message, errors=error.get("errors") or [])
            raise ExecutionError(message, worker_error=scrub(error.get("kind")))
        result = frame.get("result") or {}
        self._foreign_state = result.get("state")
        return _wire_observation(result.get("observation"))

    def _reset_args(
        self, seed: int | None, episode_id: str | None, options: dict[str, Any]
    ) -> dict[str, Any]:
        self._foreign_state = None
        return {"seed": seed, "episode_id": episode_id, "options": options}

    def _reset_observation(
        self, obs: Observation, result: dict[str, Any], worker: Worker
    ) -> Observation:
        self._foreign_state = result.get("state")
        return _wire_observation(result.get("observation"))

    def _adopt_call(self, result: dict[str, Any]) -> None:
        if isinstance(result.get("state"), dict):
            self._foreign_state = result["state"]


def _wire_observation(payload: Any) -> WireObservation:
    """OpenEnv's `{"observation", "reward", "done"}` payload as one observation."""
    if not isinstance(payload, dict):
        raise ExecutionError("the worker sent an observation that is not an object")
    body = payload.get("observation")
    body = dict(body) if isinstance(body, dict) else {}
    body.pop("reward", None)
    body.pop("done", None)
    reward = payload.get("reward")
    if "metadata" not in body and isinstance(payload.get("metadata"), dict):
        body["metadata"] = payload["metadata"]
    obs = WireObservation(
        **body,
        reward=float(reward) if isinstance(reward, int | float) else None,
        done=bool(payload.get("done")),
    )
    obs._envelope = payload  # pyright: ignore[reportPrivateUsage]
    return obs
