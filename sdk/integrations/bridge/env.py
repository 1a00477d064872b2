"""`BridgeEnvironment`: an mcpgym environment whose episode runs in a worker in another venv.

Each instance owns at most one worker process (`process.WorkerProcess`), started at the first
reset and kept across episodes while it is healthy. At reset the worker resets the foreign
environment and sends its tools, published here as dynamic tools with their JSON schemas; each
call goes to the worker, whose answer carries the tool's output, the step's reward and whether
the episode is done. Tool results are `{"output", "reward", "done"}` on every transport, so a
spec MCP client, which has no other channel for them, sees the reward and the end too. The step
that ends a scored episode also carries the library's per-function scores in its metadata
(`"verifiers"`: `reward`, `rewards`, `metrics` as the worker sent them; `"rubric"`: each
function's score); what the worker gives the operator only at reset (a Verifiers row's answer)
stays out of the observation (`operator_info`, and the final step's `verifiers.operator`).

Failures, all structured and none waiting forever: a worker that does not start within
`start_timeout_s` or cannot load the environment, or a reset that fails → `WorkerError` (an
`EXECUTION_ERROR`) and the worker is killed; a tool call the foreign tool rejects or fails →
the matching tool error (`invalid_args`, `tool_not_found`, `execution_error`); a worker that
dies, breaks the protocol, spends its memory budget (`memory_limit_mb`) or does not answer
within `call_timeout_s` (or the server's step timeout) during a call → it and its whole family are
killed, the call is an `execution_error` / `timeout` tool error naming why
(with the worker's stderr tail) and the episode ends; the next reset starts a new worker.
"""

from __future__ import annotations

import asyncio
import logging
import re
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
from mcpgym.integrations.bridge.inprocess import InProcessWorker, Worker
from mcpgym.integrations.bridge.process import WorkerError, WorkerProcess
from mcpgym.integrations.bridge.spare import SpareWorker
from mcpgym.types import Action, Observation

__all__ = ["RESULT_SCHEMA", "BridgeEnvironment", "public_error"]

_log = logging.getLogger("mcpgym.bridge")
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[/\\][^\s'\"/\\:,)]+){2,}")

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
    `call_timeout_s`, `memory_limit_mb` (each worker's memory budget).
    """

    backend: ClassVar[str] = ""
    target: ClassVar[str] = ""
    python: ClassVar[str] = ""
    paths: ClassVar[tuple[str, ...]] = ()
    options: ClassVar[dict[str, Any]] = {}
    start_timeout_s: ClassVar[float] = 60.0
    call_timeout_s: ClassVar[float] = 60.0
    memory_limit_mb: ClassVar[int | None] = None

    wrap_results: ClassVar[bool] = True
    """Tool results are `{"output", "reward", "done"}` (False: the foreign tool's value alone)."""

    _spare: ClassVar[SpareWorker | None] = None
    _worker: Worker | None = None
    _reward: float | None = None
    _scores: dict[str, Any] | None = None
    _operator: dict[str, Any] | None = None
    _in_areset: bool = False

    @classmethod
    def check_loads(cls, *, keep: bool = False) -> dict[str, Any]:
        """Start a worker once; returns its hello (the library and its version).

        `mcpgym serve` calls this before it says it is up, so a target that cannot load fails
        at start-up. Raises `ExecutionError` with a one-line message (no paths, no traceback).
        With `keep`, the worker becomes the class's warm spare (`spare.SpareWorker`): the first
        session takes it, and a new spare is started for the next; else it is stopped.
        """
        worker = cls._new_worker()
        try:
            hello = worker.start()
        except WorkerError as err:
            raise public_error(err, log=False) from None
        if not keep:
            worker.stop(grace_s=0)
            return hello
        spare = cls.__dict__.get("_spare")
        if spare is None:
            spare = SpareWorker(cls._new_worker)
            cls._spare = spare
        spare.put(worker)
        return hello

    @property
    def worker(self) -> Worker | None:
        """The running worker, if any (its `pid` is its process group id)."""
        return self._worker

    @property
    def operator_info(self) -> dict[str, Any] | None:
        """What the foreign environment gave the operator at this episode's reset and kept out
        of the observation an agent sees (a Verifiers row's `answer` and `info`, a v1 task's
        data); also in the final step's `metadata["verifiers"]["operator"]`."""
        return self._operator

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
        self._reward, self._scores, self._operator = None, None, None
        self.publish_tools([])
        args = self._reset_args(seed, episode_id, kwargs)
        try:
            worker = self._worker
            if worker is None or not worker.alive:
                worker = await self._guarded(self._start_worker())
            frame = await self._guarded(
                asyncio.to_thread(worker.request, "reset", args, self.call_timeout_s)
            )
        except WorkerError as err:
            raise public_error(err) from None
        if not frame["ok"]:
            self._stop_worker()  # a failed reset leaves the foreign env in an unknown state
            error = frame.get("error") or {}
            raise ExecutionError(
                f"{self.backend} reset failed in the worker: {scrub(error.get('message'))}",
                worker_error={k: scrub(v) for k, v in error.items()},
            )
        result = frame.get("result") or {}
        output_schema = RESULT_SCHEMA if self.wrap_results else None
        try:
            self.publish_tools(_spec(t, output_schema) for t in result.get("tools") or [])
        except Exception:
            self._stop_worker()
            raise
        return self._reset_observation(obs, result, worker)

    def _reset_args(
        self, seed: int | None, episode_id: str | None, options: dict[str, Any]
    ) -> dict[str, Any]:
        """The worker's `reset` arguments (the episode id is mcpgym's)."""
        return {"seed": seed, "episode_id": self.state.episode_id, "options": options}

    def _reset_observation(
        self, obs: Observation, result: dict[str, Any], worker: Worker
    ) -> Observation:
        """The reset observation: mcpgym's, with the foreign one under `metadata`."""
        obs.metadata["bridge"] = {"backend": self.backend, "library": worker.hello.get("library")}
        obs.metadata["observation"] = result.get("observation")
        operator = result.get("operator")
        self._operator = operator if isinstance(operator, dict) else None
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
            if err.detail.get("reason") == "request_too_large":  # refused; the worker lives on
                raise InvalidToolArguments(err.message, tool=name, errors=[]) from None
            self.end_episode()  # the foreign episode died with its worker
            cls = ToolTimeout if err.detail.get("reason") == "timeout" else ToolExecutionError
            public = public_error(err)
            raise cls(public.message, tool=name, **public.detail) from None
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
            self._scores = _scores(result)
        self._adopt_call(result)
        if not self.wrap_results:
            return result.get("output")
        return {"output": result.get("output"), "reward": self._reward, "done": done}

    def _adopt_call(self, result: dict[str, Any]) -> None:
        """A hook: what a subclass keeps of a call's result besides output, reward and done."""

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
        scores, self._scores = self._scores, None
        if scores is not None:  # the scored end: each function's value, as the library says
            observation.metadata["rubric"] = scores.pop("rubric")
            verifiers = {"reward": reward, **scores}
            if self._operator is not None:
                verifiers["operator"] = self._operator
            observation.metadata["verifiers"] = verifiers
        return reward

    async def aclose(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            await asyncio.to_thread(worker.stop)
        await super().aclose()

    # -- internals ----------------------------------------------------------------------------

    @classmethod
    def _new_worker(cls) -> Worker:
        if not cls.python:  # the library co-installs: its backend runs in this process
            return InProcessWorker(
                cls.backend,
                cls.target,
                paths=cls.paths,
                options=cls.options,
                start_timeout_s=cls.start_timeout_s,
            )
        return WorkerProcess(
            cls.python,
            cls.backend,
            cls.target,
            paths=cls.paths,
            options=cls.options,
            start_timeout_s=cls.start_timeout_s,
            memory_limit_mb=cls.memory_limit_mb,
        )

    async def _start_worker(self) -> Worker:
        spare: SpareWorker | None = type(self).__dict__.get("_spare")
        worker = None
        if spare is not None:
            worker = await asyncio.to_thread(spare.take, self.start_timeout_s)
        if worker is not None:  # loaded already, never used
            self._worker = worker
            return worker
        worker = self._new_worker()
        self._worker = worker
        await asyncio.to_thread(worker.start)
        return worker

    async def _guarded(self, awaitable: Any) -> Any:
        """Await a worker operation; if it is cancelled (a server timeout, a client gone) or the
        worker failed, the worker is killed: its state is unknown and it may still be busy."""
        try:
            return await awaitable
        except WorkerError as err:
            if err.detail.get("reason") != "request_too_large":
                self._stop_worker()
            raise
        except asyncio.CancelledError:
            self._stop_worker()
            raise

    def _stop_worker(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop(grace_s=0)


def scrub(text: Any) -> Any:
    """A message fit for a client: absolute paths cut to their last part (strings only)."""
    if not isinstance(text, str):
        return text
    return _PATH.sub(lambda m: re.split(r"[/\\\\]", m.group(0))[-1], text)


def public_error(err: WorkerError, *, log: bool = True) -> ExecutionError:
    """What a client may see of a worker failure: one line without paths; the worker's stderr
    (its traceback) goes to the `mcpgym.bridge` log instead (`log=False`: nowhere)."""
    detail = dict(err.detail)
    stderr = detail.pop("stderr", None)
    if stderr and log:
        _log.warning("%s\n%s", err.message, stderr)
    lines = [line for line in str(err.message).splitlines() if line.strip()]
    message = scrub(lines[0] if lines else "the bridge worker failed")
    return ExecutionError(message, **{k: scrub(v) for k, v in detail.items()})


def _scores(result: dict[str, Any]) -> dict[str, Any] | None:
    """A scored end's per-function values: `rewards` (`{"score", "weight"}` by name) and
    `metrics` as the worker sent them, and `rubric`, each function's score by name."""
    rewards, metrics = result.get("rewards"), result.get("metrics")
    if not isinstance(rewards, dict) and not isinstance(metrics, dict):
        return None
    scores: dict[str, Any] = {}
    rubric: dict[str, Any] = {}
    if isinstance(rewards, dict):
        scores["rewards"] = rewards
        rubric |= {k: v.get("score") if isinstance(v, dict) else v for k, v in rewards.items()}
    if isinstance(metrics, dict):
        scores["metrics"] = metrics
        rubric |= metrics
    return scores | {"rubric": rubric}


def _spec(tool: Any, output_schema: dict[str, Any] | None = RESULT_SCHEMA) -> DynamicTool:
    if not isinstance(tool, dict):
        raise ExecutionError(f"the worker sent a tool that is not an object: {tool!r}")
    schema = tool.get("input_schema") or {"type": "object", "properties": {}}
    if isinstance(schema, dict) and "type" not in schema:
        schema = {"type": "object", **schema}
    return DynamicTool(
        str(tool.get("name")),
        schema,
        description=str(tool.get("description") or ""),
        output_schema=output_schema,
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
