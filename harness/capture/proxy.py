"""`CaptureProxy`: the capture app served by uvicorn on 127.0.0.1, on the caller's event loop
(`async with`) or in a background thread of its own (`with`).

Example (async)::

    async with CaptureProxy(backend=my_model) as proxy:
        key = proxy.new_episode_key()
        # point the harness at proxy.base_url (Anthropic) / proxy.openai_base_url (OpenAI),
        # with `key` as its API key
        ...
        calls = proxy.calls(key)

Example (sync, e.g. a test without an event loop)::

    with CaptureProxy(backend=my_model) as proxy:
        ...
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Self

import uvicorn

from mcpgym.harness.capture.app import build_app
from mcpgym.harness.capture.backend import DIALECTS, Backend, Dialect
from mcpgym.harness.capture.records import LLMCall
from mcpgym.harness.capture.store import CallListener, CallStore
from mcpgym.harness.capture.upstream import Upstream

__all__ = ["CaptureProxy"]

_START_TIMEOUT_S = 15.0


class CaptureProxy:
    """An LLM capture proxy between harnesses and a model.

    Args:
        backend: an in-process model (`async def backend(ModelRequest) -> Reply`); used for every
            dialect that has no upstream.
        upstream: one `Upstream` for every dialect, or a mapping dialect → `Upstream`.
        models: model ids `GET /v1/models` lists when no upstream answers it.
        accept_unknown_keys: register unknown keys on first use instead of answering 401.
        port: 0 (default) picks a free port; read it back from `port` / `base_url`.

    Keys: `new_episode_key()` issues one key per episode; the harness sends it as its API key
    (`x-api-key` or `Authorization: Bearer`) and the proxy records the calls under it.
    """

    def __init__(
        self,
        backend: Backend | None = None,
        *,
        upstream: Upstream | Mapping[Dialect, Upstream] | None = None,
        models: list[str] | None = None,
        accept_unknown_keys: bool = False,
        port: int = 0,
    ) -> None:
        if isinstance(upstream, Upstream):
            upstreams: dict[Dialect, Upstream] = dict.fromkeys(DIALECTS, upstream)
        else:
            upstreams = dict(upstream or {})
        self.store = CallStore(accept_unknown_keys=accept_unknown_keys)
        self.app = build_app(self.store, backend, upstreams, models)
        self._requested_port = port
        self._sock: socket.socket | None = None
        self._port = 0
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._thread: threading.Thread | None = None

    # --- addresses and records -------------------------------------------------------------

    @property
    def port(self) -> int:
        if not self._port:
            raise RuntimeError("the proxy has not been started")
        return self._port

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT` — Anthropic clients (ANTHROPIC_BASE_URL) append `/v1/...`."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """`http://127.0.0.1:PORT/v1` — OpenAI clients (base_url) append `/chat/completions`."""
        return f"{self.base_url}/v1"

    def new_episode_key(self, label: str = "", listener: CallListener | None = None) -> str:
        """Issue a fresh API key for one episode; `listener(phase, call)` sees its calls live."""
        return self.store.new_key(label=label, listener=listener)

    def calls(self, key: str) -> list[LLMCall]:
        """The episode's calls so far, oldest first. Raises `UnknownKeyError` for a foreign key."""
        return self.store.calls(key)

    def drop_episode(self, key: str) -> list[LLMCall]:
        """Forget an episode's key (further calls get 401) and return its calls."""
        return self.store.drop(key)

    # --- lifecycle ---------------------------------------------------------------------------

    def _bind(self) -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self._requested_port))
        self._sock = sock
        self._port = sock.getsockname()[1]
        return sock

    def _make_server(self) -> uvicorn.Server:
        config = uvicorn.Config(
            self.app,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=2,
            access_log=False,
        )
        self._server = uvicorn.Server(config)
        return self._server

    async def start(self) -> None:
        """Serve on the running event loop until `close()`."""
        if self._server is not None:
            raise RuntimeError("the proxy is already running")
        sock, server = self._bind(), self._make_server()
        self._task = asyncio.create_task(server.serve(sockets=[sock]), name="capture-proxy")
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not server.started:
            if self._task.done():
                await self._task  # re-raise the start-up failure
                raise RuntimeError("the capture proxy stopped during start-up")
            if time.monotonic() > deadline:
                raise TimeoutError("the capture proxy did not start")
            await asyncio.sleep(0.005)

    async def close(self) -> None:
        """Stop serving (idempotent)."""
        if self._server is not None:
            self._server.should_exit = True
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self._release()

    def start_in_thread(self) -> None:
        """Serve from a background thread with its own event loop (for sync callers)."""
        if self._server is not None:
            raise RuntimeError("the proxy is already running")
        sock, server = self._bind(), self._make_server()
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="capture-proxy", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the capture proxy stopped during start-up")
            if time.monotonic() > deadline:
                raise TimeoutError("the capture proxy did not start")
            time.sleep(0.005)

    def stop_thread(self) -> None:
        """Stop a proxy started with `start_in_thread` (idempotent)."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=15.0)
            if self._thread.is_alive():
                raise RuntimeError("the capture proxy thread did not stop within 15 s")
            self._thread = None
        self._release()

    def _release(self) -> None:
        self._server = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    def __enter__(self) -> Self:
        self.start_in_thread()
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop_thread()
