"""`EpisodeToolServer`: the wrapped environment's tools as a real MCP server for one harness
episode, with the environment's own record of every call.

Each episode gets a fresh instance, reset with the episode's options, and a fresh Starlette app
serving it on `/mcp` — the servers package's own pieces (`build_mcp_server` with the instance as
its service, `build_session_manager`, `McpEndpoint` with its Origin and bearer checks), exactly as
`mcpgym serve --mode production` serves its live instance — run by uvicorn on `127.0.0.1:<free
port>` on the caller's event loop, behind a per-episode bearer token. The face is the
production one by default: tools tagged `simulation` do not exist, and `reset`/`step`/`state` are
not reachable at all. `mode="simulation"` serves the simulation face instead (still without
`reset`/`step`/`state`), for task suites whose `finish` tool is simulation-only.

The instance stays in this process, so the episode's bookkeeping works as in simulation: every
MCP `tools/call` is recorded (`EnvToolCall`; the instance's `invoke_tool`, which every transport
calls, is wrapped) and scored like a simulation step — the environment's rubric or `reward()`
sees a `CallToolAction` and its observation, and a tool that calls `end_episode()` makes the
record `done`.

For harnesses given stdio, `mcp_server("stdio")` is a command that relays stdio to this server
(`python -m mcpgym.harness.adapters.stdio_relay`), so the instance still lives here.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Literal

import uvicorn
from pydantic import BaseModel, ConfigDict, Field
from starlette.applications import Starlette
from starlette.routing import Route

from mcpgym.errors import ToolError
from mcpgym.harness.adapters.base import HarnessError, McpServer
from mcpgym.mcp_env import MCPEnvironment
from mcpgym.servers.factory import load_target, make_factory
from mcpgym.servers.mcp.routes import McpEndpoint, build_session_manager
from mcpgym.servers.mcp.server import build_mcp_server
from mcpgym.servers.settings import ServerSettings
from mcpgym.tools import Mode
from mcpgym.types import CallToolAction, CallToolObservation, Observation, ToolErrorInfo

__all__ = ["EnvToolCall", "EpisodeToolServer"]

_START_TIMEOUT_S = 30.0


class EnvToolCall(BaseModel):
    """One tool call as the environment saw it: arguments, result or structured error, and the
    step's reward, `done` and observation metadata (named rubric scores, a grade) as the
    environment's rubric / `reward()` produced them. `turn` is the harness turn it happened in."""

    model_config = ConfigDict(extra="forbid")

    index: int
    turn: int | None = None
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    error: dict[str, Any] | None = None
    reward: float | None = None
    done: bool = False
    metadata: dict[str, Any] = Field(default_factory=dict)
    duration_s: float = 0.0


class _InLoopServer(uvicorn.Server):
    """uvicorn on the caller's loop: several episodes may run at once, so no server may take
    over the process's signal handlers."""

    @contextlib.contextmanager
    def capture_signals(self) -> Any:
        yield


async def _serve(server: uvicorn.Server, sock: socket.socket) -> None:
    try:
        await server.serve(sockets=[sock])
    except SystemExit as exc:  # uvicorn exits the process when the app's start-up fails
        raise HarnessError(f"the environment's app failed to start (exit {exc.code})") from None


class EpisodeToolServer:
    """Serve one episode of `target` (an `MCPEnvironment` class, factory or `"module:attr"`)
    with the tools of `mode` (see the module docstring)."""

    def __init__(self, target: Any, *, name: str = "env", mode: Mode = "production") -> None:
        self.target = load_target(target) if isinstance(target, str) else target
        self.name = name
        self.mode: Mode = mode
        self.calls: list[EnvToolCall] = []
        self.turn: int | None = None
        self.token = ""
        self.port = 0
        self._env: MCPEnvironment | None = None
        self._live: MCPEnvironment | None = None  # started and not yet closed
        self._server: _InLoopServer | None = None
        self._task: asyncio.Task[None] | None = None
        self._sock: socket.socket | None = None

    @property
    def env(self) -> MCPEnvironment:
        """The episode's live environment instance (read its state; do not drive it)."""
        if self._env is None:
            raise HarnessError("the episode's tool server is not running")
        return self._env

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def mcp_server(self, transport: Literal["http", "stdio"] = "http") -> McpServer:
        """How a harness reaches the tools: the URL and bearer header, or the stdio relay."""
        if transport == "http":
            return McpServer(self.name, url=self.url, headers=self._auth())
        command = (sys.executable, "-m", "mcpgym.harness.adapters.stdio_relay", self.url)
        return McpServer(self.name, command=command, env={"MCPGYM_RELAY_TOKEN": self.token})

    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    async def start(self, reset_options: dict[str, Any]) -> Observation:
        """Build and reset the instance, then serve it; returns the reset observation."""
        await self.stop()
        self.calls, self.token = [], secrets.token_urlsafe(24)
        factory, _ = make_factory(self.target, self.mode)
        env = await asyncio.get_running_loop().run_in_executor(None, factory)
        if not isinstance(env, MCPEnvironment):
            raise HarnessError(f"{type(env).__name__} is not an MCPEnvironment: it has no tools")
        self._env = self._live = env
        try:
            observation = await env.areset(**reset_options)
            # Record what every transport calls (`invoke_tool`, servers/mcp/server.py), not
            # `call_tool`: a class that runs tools its own way (Calendar Gym overrides both
            # `call_tool` and `call_tool_sync`) never goes through `call_tool` there.
            env.invoke_tool = self._recording(env, env.invoke_tool)  # type: ignore[method-assign]
            await self._serve(self._app(env))
        except BaseException:
            await self.stop()
            raise
        return observation

    def _app(self, env: MCPEnvironment) -> Starlette:
        settings = ServerSettings(mode="production", token=self.token, max_sessions=8)

        async def service() -> MCPEnvironment:
            return env

        meta = env.metadata()
        server = build_mcp_server(
            name=meta.name,
            version=meta.version,
            instructions=meta.description or None,
            tool_specs=lambda: env.tool_specs,
            mode=self.mode,
            sessions=None,
            default_env=service,
        )
        manager = build_session_manager(server, settings, env.tool_specs)

        @contextlib.asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            async with manager.run():
                yield

        endpoint = McpEndpoint(manager, settings, None)
        route = Route("/mcp", endpoint, methods=["GET", "POST", "DELETE"])
        return Starlette(routes=[route], lifespan=lifespan)

    async def _serve(self, app: Starlette) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self._sock, self.port = sock, sock.getsockname()[1]
        config = uvicorn.Config(
            app, log_level="warning", lifespan="on", access_log=False, timeout_graceful_shutdown=2
        )
        server = self._server = _InLoopServer(config)
        self._task = asyncio.create_task(_serve(server, sock), name=f"mcp-{self.port}")
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not server.started:
            if self._task.done() or time.monotonic() > deadline:
                failed = self._task.done() and not self._task.cancelled()
                error = self._task.exception() if failed else None
                raise HarnessError(f"the environment's MCP server did not start: {error!r}")
            await asyncio.sleep(0.005)

    def _recording(
        self, env: MCPEnvironment, invoke_tool: Callable[..., Awaitable[Any]]
    ) -> Callable[..., Awaitable[Any]]:
        async def recorded(
            name: str, arguments: dict[str, Any] | None, timeout_s: float | None = None
        ) -> Any:
            record = EnvToolCall(
                index=len(self.calls), turn=self.turn, tool=name, arguments=arguments or {}
            )
            self.calls.append(record)
            started = time.monotonic()
            try:
                result = await invoke_tool(name, arguments, timeout_s)
            except ToolError as err:
                record.error = err.to_info()
                record.duration_s = time.monotonic() - started
                error = ToolErrorInfo(**record.error)
                await self._score(env, record, CallToolObservation(tool_name=name, error=error))
                raise
            record.result = result
            record.duration_s = time.monotonic() - started
            await self._score(env, record, CallToolObservation(tool_name=name, result=result))
            return result

        return recorded

    @staticmethod
    async def _score(env: MCPEnvironment, record: EnvToolCall, obs: Observation) -> None:
        # The same bookkeeping as `MCPEnvironment.astep` after its `call_tool`: count the step,
        # set done, apply the rubric or reward().
        action = CallToolAction(tool_name=record.tool, arguments=record.arguments)
        try:
            scored = await env.afinish_step(action, obs)
        except Exception as exc:  # a broken rubric must not break the harness's tool call
            record.error = (record.error or {}) | {"reward_error": f"{type(exc).__name__}: {exc}"}
            return
        record.reward, record.done = scored.reward, scored.done
        record.metadata = scored.metadata

    def env_state(self) -> dict[str, Any]:
        """The environment's `state` as JSON data (`{}` when it cannot be read)."""
        if self._env is None:
            return {}
        try:
            return self._env.state.model_dump(mode="json")
        except Exception:
            return {}

    async def stop(self) -> None:
        """Stop serving and close the instance (idempotent); frees the port. The instance stays
        readable (`env`, `env_state()`) until the next `start`."""
        server, task, sock = self._server, self._task, self._sock
        self._server = self._task = self._sock = None
        if server is not None:
            server.should_exit = True
        try:
            if task is not None:
                try:
                    await asyncio.wait_for(asyncio.shield(task), 10.0)
                except TimeoutError:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await task
                except asyncio.CancelledError:
                    task.cancel()  # we are cancelled: do not leave the server running
                    raise
                except Exception:  # the server failed while stopping: it is stopped all the same
                    pass
        finally:
            if sock is not None:
                sock.close()
        env, self._live = self._live, None
        if env is not None:
            with contextlib.suppress(Exception):  # closing must finish whatever the env does
                await env.aclose()
