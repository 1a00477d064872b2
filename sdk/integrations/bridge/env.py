"""`BridgeEnvironment`: an mcpgym environment whose episode runs in a worker in another venv.

Each instance owns at most one worker process (`process.WorkerProcess`), started at the first
reset and kept across episodes while it is healthy. At reset the worker resets the foreign
environment and sends its tools, published here as dynamic tools with their JSON schemas; each
call goes to the worker, whose answer carries the tool's output, the step's reward and whether
the episode is done. Tool results are `{"output", "reward", "done"}` on every transport, so a
spec MCP client, which has no other channel for them, sees the reward and the end too.

Failures, all structured and none waiting forever: a worker that does not start within
`start_timeout_s` or cannot load the environment, or a reset that fails → `WorkerError` (an
`EXECUTION_ERROR`) and the worker is killed; a tool call the foreign tool rejects or fails →
the matching tool error (`invalid_args`, `tool_not_found`, `execution_error`); a worker that
dies or does not answer within `call_timeout_s` (or the server's step timeout) during a call →
its process group is killed, the call is an `execution_error` / `timeout` tool error naming why
(with the worker's stderr tail) and the episode ends; the next reset starts a new worker.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from mcpgym.dynamic_tools import DynamicTool, DynamicToolsEnvironment
from mcpgym.errors import (
    ExecutionError,
    InvalidToolArguments,
    ToolError,
    ToolExecutionError,
    ToolNotFound,
    ToolTimeout,
)
from mcpgym.integrations.bridge.process import WorkerError, WorkerProcess
from mcpgym.types import Action, Observation

__all__ = ["RESULT_SCHEMA", "BridgeEnvironment"]

# What every bridged tool returns: the foreign tool's output, the step's reward, episode end.
RESULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "output": {},
        "reward": {"type": ["number", "null"]},
        "done": {"type": "boolean"},
    },
    "required": ["output", "reward", "done"],
}


class BridgeEnvironment(DynamicToolsEnvironment):
    """Proxy to a foreign environment in a worker process (configure with `bridge_environment`).

    Class attributes: `backend`, `target` (`MODULE:ATTR`), `python` (the worker's interpreter),
    `paths` (extra `sys.path` for the worker), `options` (backend options), `start_timeout_s`,
    `call_timeout_s`.
    """

    backend: ClassVar[str] = ""
    target: ClassVar[str] = ""
    python: ClassVar[str] = ""
    paths: ClassVar[tuple[str, ...]] = ()
    options: ClassVar[dict[str, Any]] = {}
    start_timeout_s: ClassVar[float] = 60.0
    call_timeout_s: ClassVar[float] = 60.0

    _worker: WorkerProcess | None = None
    _reward: float | None = None
    _in_areset: bool = False

    @property
    def worker(self) -> WorkerProcess | None:
        """The running worker, if any (its `pid` is its process group id)."""
        return self._worker

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Observation:
        """In-process, synchronous use: runs `areset` (which starts the worker) in a fresh event
        loop; inside a running loop use `await env.areset(...)`."""
        if self._in_areset:  # the base reset, run by `areset` itself
            return super().reset(seed=seed, episode_id=episode_id)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.areset(seed=seed, episode_id=episode_id, **kwargs))
        raise RuntimeError(
            "reset() cannot start the bridge worker inside a running event loop; use areset()."
        )

    async def areset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Observation:
        self._in_areset = True
        try:
            obs = await super().areset(seed=seed, episode_id=episode_id)
        finally:
            self._in_areset = False
        self._reward = None
        self.publish_tools([])
        worker = self._worker
        if worker is None or not worker.alive:
            worker = await self._guarded(self._start_worker())
        args = {"seed": seed, "episode_id": self.state.episode_id, "options": kwargs}
        frame = await self._guarded(
            asyncio.to_thread(worker.request, "reset", args, self.call_timeout_s)
        )
        if not frame["ok"]:
            self._stop_worker()  # a failed reset leaves the foreign env in an unknown state
            error = frame.get("error") or {}
            raise ExecutionError(
                f"{self.backend} reset failed in the worker: {error.get('message')}",
                worker_error=error,
            )
        result = frame.get("result") or {}
        try:
            self.publish_tools(_spec(t) for t in result.get("tools") or [])
        except Exception:
            self._stop_worker()
            raise
        obs.metadata["bridge"] = {"backend": self.backend, "library": worker.hello.get("library")}
        obs.metadata["observation"] = result.get("observation")
        return obs

    async def dispatch_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        worker = self._worker
        if worker is None or not worker.alive:
            raise ToolExecutionError(
                "the bridge worker is not running (reset to start a new one)", tool=name
            )
        args = {"name": name, "arguments": arguments}
        try:
            frame = await self._guarded(
                asyncio.to_thread(worker.request, "call", args, self.call_timeout_s)
            )
        except WorkerError as err:
            self.end_episode()  # the foreign episode died with its worker
            cls = ToolTimeout if err.detail.get("reason") == "timeout" else ToolExecutionError
            raise cls(err.message, tool=name, **err.detail) from None
        except asyncio.CancelledError:
            self.end_episode()  # a departed client, or a timeout: the worker is being killed
            raise
        if not frame["ok"]:
            raise _tool_error(name, frame.get("error") or {})
        result = frame.get("result") or {}
        reward, done = result.get("reward"), bool(result.get("done"))
        self._reward = float(reward) if isinstance(reward, int | float) else None
        if done:
            self.end_episode()
        return {"output": result.get("output"), "reward": self._reward, "done": done}

    async def invoke_tool(
        self, name: str, arguments: dict[str, Any] | None, timeout_s: float | None = None
    ) -> Any:
        # A call past the server's step timeout is cancelled after its error is raised; the
        # cancellation kills the worker, so the episode ends with this very step.
        try:
            return await super().invoke_tool(name, arguments, timeout_s)
        except ToolTimeout:
            self.end_episode()
            raise

    def reward(self, action: Action, observation: Observation) -> float | None:
        reward, self._reward = self._reward, None
        return reward

    async def aclose(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            await asyncio.to_thread(worker.stop)
        await super().aclose()

    # -- internals ----------------------------------------------------------------------------

    async def _start_worker(self) -> WorkerProcess:
        worker = WorkerProcess(
            self.python,
            self.backend,
            self.target,
            paths=self.paths,
            options=self.options,
            start_timeout_s=self.start_timeout_s,
        )
        self._worker = worker
        await asyncio.to_thread(worker.start)
        return worker

    async def _guarded(self, awaitable: Any) -> Any:
        """Await a worker operation; if it is cancelled (a server timeout, a client gone) or the
        worker failed, the worker is killed: its state is unknown and it may still be busy."""
        try:
            return await awaitable
        except (asyncio.CancelledError, WorkerError):
            self._stop_worker()
            raise

    def _stop_worker(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop(grace_s=0)


def _spec(tool: Any) -> DynamicTool:
    if not isinstance(tool, dict):
        raise ExecutionError(f"the worker sent a tool that is not an object: {tool!r}")
    schema = tool.get("input_schema") or {"type": "object", "properties": {}}
    if isinstance(schema, dict) and "type" not in schema:
        schema = {"type": "object", **schema}
    return DynamicTool(
        str(tool.get("name")),
        schema,
        description=str(tool.get("description") or ""),
        output_schema=RESULT_SCHEMA,
    )


def _tool_error(name: str, error: dict[str, Any]) -> ToolError:
    kind, message = error.get("kind"), str(error.get("message") or "the tool failed")
    detail = {k: v for k, v in error.items() if k not in ("kind", "message")}
    if kind == "invalid_args":
        detail.setdefault("errors", [])
        return InvalidToolArguments(message, tool=name, **detail)
    if kind == "unknown_tool":
        return ToolNotFound(message, tool=name, **detail)
    return ToolExecutionError(message, tool=name, worker_error=kind, **detail)
