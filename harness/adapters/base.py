"""`AgenticHarnessAdapter`: drive one agent harness (a CLI or a Python callable) turn by turn.

An adapter owns one episode of one harness at a time:

- `start(mcp, model)` launches it with the environment's tools (`McpServer`) and a model endpoint
  (`ModelEndpoint`), in a private HOME/config folder;
- `turn(message)` sends one user message and streams `HarnessEvent`s — `tool_call`,
  `tool_result`, `text`, `llm_request`, `llm_response`, `error` — ending in exactly one
  `turn_complete` carrying the final response (and, when the harness says so, `done`);
- `alive()` says whether the harness can take another turn;
- `stop()` (idempotent) removes everything the adapter created: its processes by process group
  (children included), its temporary folders and ports. `start` may be called again afterwards.

A harness that dies during a turn raises `HarnessCrashed` (with the tail of its stderr) from the
`turn` iterator; timeouts are the caller's business (`HarnessEnvironment` applies them).

Subclasses implement `_start`, `_turn`, `_alive` and `_stop` and declare `capabilities`.

Example:
    >>> caps = HarnessCapabilities(process="persistent", dialect="anthropic",
    ...                            tool_naming="mcp__{server}__{tool}", resume=True)
    >>> caps.tool_name("env", "guess")
    'mcp__env__guess'
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from mcpgym.errors import ExecutionError, SessionError
from mcpgym.harness.adapters.events import (
    ErrorEvent,
    HarnessEvent,
    LlmRequestEvent,
    LlmResponseEvent,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnComplete,
    event_adapter,
)

__all__ = [
    "AgenticHarnessAdapter",
    "ErrorEvent",
    "HarnessCapabilities",
    "HarnessCrashed",
    "HarnessError",
    "HarnessEvent",
    "LlmRequestEvent",
    "LlmResponseEvent",
    "McpServer",
    "ModelEndpoint",
    "TextEvent",
    "ToolCallEvent",
    "ToolResultEvent",
    "TurnComplete",
    "event_adapter",
]


class HarnessError(ExecutionError):
    """The harness could not be started or driven (missing binary, bad configuration, …)."""


class HarnessCrashed(HarnessError):
    """The harness process exited or broke its protocol; `stderr_tail` says why."""

    def __init__(
        self, message: str, *, stderr_tail: str = "", returncode: int | None = None
    ) -> None:
        full = f"{message}\n--- stderr tail ---\n{stderr_tail}" if stderr_tail else message
        super().__init__(full, returncode=returncode, stderr_tail=stderr_tail)
        self.stderr_tail = stderr_tail
        self.returncode = returncode


# -- configuration -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ModelEndpoint:
    """Where the harness sends its model calls.

    `url` is the server root (`http://127.0.0.1:PORT`, `https://api.anthropic.com`); OpenAI
    dialects get `openai_url` (the root plus `/v1`). `api_key` is per episode in tests (the capture
    proxy's key); `model` is the model id the harness asks for.

    Example:
        >>> ModelEndpoint("http://127.0.0.1:9/v1", "k", "m").anthropic_url
        'http://127.0.0.1:9'
        >>> ModelEndpoint("http://127.0.0.1:9", "k", "m").openai_url
        'http://127.0.0.1:9/v1'
    """

    url: str
    api_key: str
    model: str = "scripted"

    @property
    def anthropic_url(self) -> str:
        return self.url.rstrip("/").removesuffix("/v1")

    @property
    def openai_url(self) -> str:
        return self.anthropic_url + "/v1"


@dataclass(frozen=True, slots=True)
class McpServer:
    """The environment's tools as the harness must reach them: Streamable HTTP (`url` plus
    `headers`) or stdio (`command` plus `env`). `name` is the server name the harness shows
    (tool names derive from it, e.g. `mcp__env__guess`)."""

    name: str = "env"
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    command: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict[str, str])

    @property
    def transport(self) -> Literal["http", "stdio"]:
        return "http" if self.url else "stdio"

    @property
    def bearer_token(self) -> str | None:
        scheme, _, token = self.headers.get("Authorization", "").partition(" ")
        return token if scheme.lower() == "bearer" and token else None


class HarnessCapabilities(BaseModel):
    """What a harness is, declared per adapter class.

    Attributes:
        process: `persistent` (one process per episode, fed turn after turn), `per_turn` (a new
            process per turn, resuming its session) or `in_process` (a Python callable).
        dialect: the model API it speaks (`None`: none of its own, e.g. a scripted agent).
        tool_naming: how it names an MCP tool to its model; `{server}` and `{tool}` are replaced.
        resume: whether a conversation survives a process restart (per-turn CLIs need it).
        transports: MCP transports it can be given.
    """

    model_config = ConfigDict(frozen=True)

    process: Literal["persistent", "per_turn", "in_process"]
    dialect: Literal["anthropic", "openai-chat", "openai-responses"] | None = None
    tool_naming: str = "{tool}"
    resume: bool = False
    transports: tuple[Literal["http", "stdio"], ...] = ("http", "stdio")

    def tool_name(self, server: str, tool: str) -> str:
        """The name the harness's model sees for `tool` of MCP server `server`."""
        return self.tool_naming.format(server=server, tool=tool)


# -- the adapter -------------------------------------------------------------------------------

_DONE = object()


class AgenticHarnessAdapter(abc.ABC):
    """Base class of every harness adapter (see the module docstring for the lifecycle).

    Class attributes (set in ALL subclasses): `name`, `capabilities`.
    """

    name: ClassVar[str] = "harness"
    capabilities: ClassVar[HarnessCapabilities]

    def __init__(self) -> None:
        self._started = False
        self._side: asyncio.Queue[Any] | None = None
        self._in_turn = False

    # -- what subclasses implement ---------------------------------------------------------------

    @abc.abstractmethod
    async def _start(self, mcp: McpServer, model: ModelEndpoint | None) -> None: ...

    @abc.abstractmethod
    def _turn(self, message: str) -> AsyncGenerator[Any, None]:
        """Yield the turn's events; the last one must be a `TurnComplete`."""

    @abc.abstractmethod
    def _alive(self) -> bool: ...

    @abc.abstractmethod
    async def _stop(self) -> None:
        """Remove everything `_start` and the turns created; called once per `start`."""

    # -- the public contract ---------------------------------------------------------------------

    async def start(self, mcp: McpServer, model: ModelEndpoint | None = None) -> None:
        """Launch the harness for a new episode (stops a running one first)."""
        await self.stop()
        self._side = asyncio.Queue()
        self._started = True
        try:
            await self._start(mcp, model)
        except BaseException:
            await self.stop()
            raise

    def alive(self) -> bool:
        """Whether the harness is started and able to take a turn."""
        return self._started and self._alive()

    async def stop(self) -> None:
        """Stop the harness and remove what it created (idempotent; never raises)."""
        if not self._started:
            return
        self._started = False
        self._side = None
        with contextlib.suppress(Exception):  # `_stop` cleans up synchronously when cancelled
            await self._stop()

    def publish(self, event: BaseModel) -> None:
        """Add an event from outside the harness (e.g. the capture proxy's `llm_request`s) to the
        current turn's stream. Must be called on the adapter's event loop."""
        if self._side is not None and self._in_turn:
            self._side.put_nowait(event)

    async def turn(self, message: str) -> AsyncIterator[HarnessEvent]:
        """Send one user message; yield the turn's events, the last one a `TurnComplete`."""
        if not self._started:
            raise SessionError(f"{self.name}: start() the harness before a turn")
        if self._in_turn:
            raise SessionError(f"{self.name}: a turn is already running")
        side = self._side
        assert side is not None
        while not side.empty():  # events from between turns belong to no turn
            side.get_nowait()
        self._in_turn = True
        pump = asyncio.create_task(self._pump(message, side), name=f"{self.name}-turn")
        try:
            while True:
                item = await side.get()
                if item is _DONE:
                    break
                if isinstance(item, BaseException):
                    raise item
                yield item
                if isinstance(item, TurnComplete):
                    break
        finally:
            self._in_turn = False
            if not pump.done():
                pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pump

    async def _pump(self, message: str, side: asyncio.Queue[Any]) -> None:
        # The `TurnComplete` is held back until the subclass's generator is exhausted, so a
        # per-turn process has exited (and saved its session) before the caller sees the end.
        final: TurnComplete | None = None
        try:
            async with contextlib.aclosing(self._turn(message)) as events:
                async for event in events:
                    if not isinstance(event, TurnComplete):
                        side.put_nowait(event)
                    elif final is None:
                        final = event
            side.put_nowait(final if final is not None else self._no_completion())
        except HarnessError as err:
            side.put_nowait(err)
        except Exception as exc:
            side.put_nowait(
                HarnessCrashed(f"{self.name}: the adapter failed: {type(exc).__name__}: {exc}")
            )
        finally:
            side.put_nowait(_DONE)

    def _no_completion(self) -> HarnessError:
        return HarnessCrashed(f"{self.name}: the turn ended without a result")
