"""`mcpgym serve MODULE:ATTR --stdio`: the production face over stdin/stdout.

stdout carries only MCP messages (the `mcp` package points fd 1 at stderr while serving, and we
log to stderr); the process exits when stdin closes. One long-lived environment instance,
reset at start-up, serves every request. A line that is not JSON gets the JSON-RPC parse error
(-32700) and one that is JSON but not a single message (a batch, say) gets -32600, as JSON-RPC
2.0 asks; the `mcp` package alone would drop them without a word. When the line is JSON with an
`id` (say, a request nested deeper than the `mcp` parser allows) the error carries that id, so
the client's request is answered. Lines are capped (`max_line_bytes`): a longer one is skipped
to its newline without being buffered, and answered with -32600.
"""

from __future__ import annotations

# First: `mcp` then loads without its client side (servers/mcp/lean.py).
from mcpgym.runtime import crashes
from mcpgym.servers.mcp import lean as mcp_lean  # noqa: F401  # pyright: ignore[reportUnusedImport]

# isort: split

import contextlib
import fcntl
import json
import logging
import os
import sys
from collections import deque
from typing import Any

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from mcpgym.errors import InvalidJSON
from mcpgym.mcp_env import MCPEnvironment
from mcpgym.servers import wire_json
from mcpgym.servers.factory import make_factory
from mcpgym.servers.mcp.server import build_mcp_server
from mcpgym.servers.wire_json import DEFAULT_MAX_RESULT_BYTES

__all__ = ["serve_stdio"]

log = logging.getLogger("mcpgym.servers")


def serve_stdio(
    target: Any,
    reset_options: dict[str, Any] | None = None,
    *,
    max_line_bytes: int = 4 * 1024 * 1024,
    timeout_s: float | None = None,
    debug: bool = False,
) -> int:
    """Serve `target`'s production tools over stdio until stdin closes; returns an exit code.

    With `debug`, tool errors carry the traceback of what the environment raised (stdio's only
    peer is the operator who started it; mcpgym.runtime.crashes logs it to stderr either way).
    """
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, force=True)
    if debug:
        crashes.expose_tracebacks(True)
    factory, _ = make_factory(target, "production", DEFAULT_MAX_RESULT_BYTES)
    env = factory()
    if not isinstance(env, MCPEnvironment):
        print(f"mcpgym: {type(env).__name__} has no tools to serve over MCP", file=sys.stderr)
        return 2

    async def run() -> None:
        await env.areset(**(reset_options or {}))

        async def service() -> MCPEnvironment:
            return env

        meta = env.metadata()
        server = build_mcp_server(
            name=meta.name,
            version=meta.version,
            instructions=meta.description or None,
            tool_specs=lambda: env.tool_specs,
            mode="production",
            sessions=None,
            default_env=service,
            timeout_s=timeout_s,
            # no requestState sealing (nor its `cryptography` import) unless a tool can ask
            asks_client=any(
                getattr(spec, "context_param", None) is not None for spec in env.tool_specs.values()
            ),
        )
        lines = CappedLines(_claim_stdin(), max_line_bytes)
        try:
            async with (
                stdio_server(stdin=lines) as (read, write),  # pyright: ignore[reportArgumentType]
                anyio.create_task_group() as tg,
            ):
                send, screened = anyio.create_memory_object_stream[SessionMessage | Exception](0)
                tg.start_soon(_screen, read, write, send, lines)
                await server.run(screened, write, server.create_initialization_options())
                tg.cancel_scope.cancel()
        finally:
            lines.release()
            await env.aclose()

    anyio.run(run)
    return 0


def _claim_stdin() -> int:
    """A private descriptor for the wire's stdin; fd 0 then reads the null device, so tools and
    their children cannot swallow protocol bytes (as the `mcp` package does for its own reader)."""
    private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return private


class CappedLines:
    """stdin as an async iterator of text lines, none longer than `limit` bytes.

    A longer line is discarded as it streams in (never buffered whole) and yields `TOO_LONG`;
    a line that is not strict JSON (`NaN`, `1e999`, nesting deeper than `wire_json.MAX_DEPTH`,
    which the `mcp` package's own parser would accept or fail on) yields `NOT_STRICT`; `raw`
    records, line by line, what was yielded, for `_screen` to answer failures.
    """

    TOO_LONG = "\x00line-too-long"
    NOT_STRICT = "\x00line-not-strict-json"

    def __init__(self, fd: int, limit: int) -> None:
        self.fd = fd
        self.limit = limit
        self._buffer = b""
        self._skipping = False
        self._pending: deque[tuple[str, str]] = deque()  # (what is yielded, what was read)
        self.raw: deque[str] = deque()  # each yielded line, in order (the screen pops them)

    def __aiter__(self) -> CappedLines:
        return self

    async def __anext__(self) -> str:
        while not self._pending:
            chunk = await anyio.to_thread.run_sync(os.read, self.fd, 65536)
            if not chunk:
                if self._buffer and not self._skipping:
                    self._emit(self._buffer)
                    self._buffer = b""
                    break
                raise StopAsyncIteration
            self._feed(chunk)
        line, raw = self._pending.popleft()
        self.raw.append(raw)
        return line

    def _feed(self, chunk: bytes) -> None:
        while chunk:
            end = chunk.find(b"\n")
            if end < 0:
                if not self._skipping:
                    self._buffer += chunk
                    if len(self._buffer) > self.limit:
                        self._buffer, self._skipping = b"", True
                        self._pending.append((self.TOO_LONG, self.TOO_LONG))
                return
            piece, chunk = chunk[:end], chunk[end + 1 :]
            if self._skipping:
                self._skipping = False
                continue
            line = self._buffer + piece
            self._buffer = b""
            if len(line) > self.limit:
                self._pending.append((self.TOO_LONG, self.TOO_LONG))
            else:
                self._emit(line)

    def _emit(self, line: bytes) -> None:
        text = line.decode("utf-8", "replace")
        if text.strip():
            try:
                wire_json.loads(text, "the line")
            except InvalidJSON:
                self._pending.append((self.NOT_STRICT, self.NOT_STRICT + text))
                return
        self._pending.append((text + "\n", text + "\n"))

    def release(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


def _request_id(line: str) -> str | int | None:
    """The `id` of a line that is a JSON object, if Python's parser can read it."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    rid = message.get("id") if isinstance(message, dict) else None
    if isinstance(rid, str) and not rid.isascii():  # echoed only if it can be written back
        try:
            rid.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: the reply could not be written
            return None
    return rid if isinstance(rid, str | int) and not isinstance(rid, bool) else None


async def _screen(read: Any, write: Any, forward: Any, lines: CappedLines) -> None:
    """Forward well-formed messages to the server; answer unreadable lines with an error."""
    async with forward:
        async for item in read:
            raw = lines.raw.popleft() if lines.raw else ""
            if not isinstance(item, Exception):
                await forward.send(item)
                continue
            rid: str | int | None = None
            if raw == CappedLines.TOO_LONG:
                error = ErrorData(
                    code=INVALID_REQUEST,
                    message=f"Invalid Request: the line exceeds {lines.limit} bytes",
                )
            elif raw.startswith(CappedLines.NOT_STRICT):
                rid = _request_id(raw[len(CappedLines.NOT_STRICT) :])
                error = ErrorData(
                    code=PARSE_ERROR,
                    message="Parse error: the line is not strict JSON (NaN, Infinity, a number "
                    f"out of range, a lone surrogate or nesting deeper than {wire_json.MAX_DEPTH} "
                    "levels)",
                )
            else:
                rid = _request_id(raw)
                parse = isinstance(item, ValidationError) and any(
                    e["type"] == "json_invalid" for e in item.errors(include_url=False)
                )
                if parse and rid is not None:  # JSON after all, only too deep for the parser
                    error = ErrorData(
                        code=INVALID_REQUEST,
                        message="Invalid Request: the message is nested too deeply",
                    )
                elif parse:
                    error = ErrorData(
                        code=PARSE_ERROR, message="Parse error: the line is not valid JSON"
                    )
                else:
                    error = ErrorData(
                        code=INVALID_REQUEST,
                        message="Invalid Request: a line must hold one JSON-RPC message "
                        "(no batches)",
                    )
            log.warning("stdio: %s", error.message)
            await write.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=rid, error=error)))
