"""`ServerSettings`: every knob of an mcpgym server in one frozen dataclass."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcpgym.tools import Mode

__all__ = ["ServerSettings"]


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """Settings shared by the app, the transports and the CLI.

    Attributes:
        mode: `"simulation"` (trainer owns episodes) or `"production"` (real MCP service).
        max_sessions: concurrent WebSocket/MCP sessions; one more gets `CAPACITY_REACHED`.
        idle_timeout_s: a session with no message for this long is closed and its slot freed.
        reap_interval_s: how often idle sessions are looked for.
        max_frame_bytes: largest accepted WebSocket frame or HTTP body.
        step_timeout_s: default per-step timeout when the request names none (`None`: no limit).
        token: the operator's bearer token: required on `/ws` and (without principals) on
            `/mcp` when set. With principals it opens `/ws` only (see docs/security.md).
        allowed_origins: browser origins accepted besides localhost ones.
        allowed_hosts: `Host` header values accepted besides loopback ones (DNS-rebinding guard).
        principals: token → reset options; each token's holder gets its own production instance
            (e.g. `{"tok-a": {"user": "alice@acme.test"}}`). Implies bearer auth.
        max_header_bytes: largest request head (request line + headers), on h11 and httptools.
        max_headers: most headers one request may carry.
        max_line_bytes: longest stdio line (one JSON-RPC message).
        max_mcp_sessions: concurrent simulation `/mcp` sessions, a quota of their own so MCP
            clients cannot take `/ws`'s slots (`None`: the same as `max_sessions`).
        worker_threads: size of the shared pool running sync environment code (`None`:
            min(32, cpus + 4)); timed-out calls leave it (docs/security.md).
        production_ws: in production mode, serve `/ws` too (requires `token`; only that token
            opens it, never a principal's).
        web: serve the browser UI at `/web` (servers/web; not imported when off).
        web_tasks: `MODULE:ATTR` naming episode specs (objects or dicts with `id`, `reset`,
            `prompt`, or a callable returning them) the web UI offers as tasks to play.
        session_memory_mb: end a session whose environment holds more than this many MiB
            (`servers/guards/memory_guard.py`: what is measured and what is not); `None`: no budget.
        ors_wire: also speak the ORS wire protocol (`servers/ors/routes.py`: sessions keyed by
            `X-Session-ID`, tool calls over SSE); episode control, so simulation mode only.
        debug: return the traceback of an environment's exception in its error (`traceback`)
            to the operator's requests, never a principal's (servers/debug.py); every such
            exception is logged with its traceback either way (mcpgym.runtime.crashes).
        max_result_bytes: the largest tool result (its JSON) a call answers with; a larger one
            is a `RESULT_TOO_LARGE` tool error (servers/wire_json.py). `None`: no cap.
        head_timeout_s: a request head (and so a WebSocket handshake) must arrive within this,
            and a request body must not stall longer than this between two reads.
        max_pending_heads: connections still sending their head at once; one more closes the
            one that has been at it longest (a reserve of descriptors for everyone else).
        principal_sessions: MCP sessions and OpenEnv dialect sessions one principal token may
            hold at once (`None`: an eighth of `max_sessions`, at least 1); 429 beyond.
    """

    mode: Mode = "simulation"
    max_sessions: int = 1024
    idle_timeout_s: float = 600.0
    reap_interval_s: float = 5.0
    max_frame_bytes: int = 4 * 1024 * 1024
    step_timeout_s: float | None = None
    token: str | None = None
    allowed_origins: tuple[str, ...] = field(default_factory=tuple)
    allowed_hosts: tuple[str, ...] = field(default_factory=tuple)
    principals: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    production_ws: bool = False
    web: bool = False
    web_tasks: str | None = None
    max_header_bytes: int = 32 * 1024
    max_headers: int = 100
    max_line_bytes: int = 4 * 1024 * 1024
    max_mcp_sessions: int | None = None
    worker_threads: int | None = None
    ors_wire: bool = False
    debug: bool = False
    session_memory_mb: int | None = None
    max_result_bytes: int | None = 4 * 1024 * 1024
    head_timeout_s: float = 10.0
    max_pending_heads: int = 256
    principal_sessions: int | None = None

    def __post_init__(self) -> None:
        if self.mode not in ("simulation", "production"):
            raise ValueError(f"mode must be 'simulation' or 'production', not {self.mode!r}")
        if self.max_sessions < 1:
            raise ValueError("max_sessions must be at least 1")
        if self.session_memory_mb is not None and self.session_memory_mb < 1:
            raise ValueError("session_memory_mb must be at least 1")
        if self.production_ws and not self.token:
            # principal tokens never open /ws: only the operator's token can
            raise ValueError("production_ws requires the operator token: /ws controls episodes")
        if self.max_result_bytes is not None and self.max_result_bytes < 1:
            raise ValueError("max_result_bytes must be at least 1 (or None for no cap)")
        if self.head_timeout_s <= 0 or self.max_pending_heads < 1:
            raise ValueError("head_timeout_s must be positive and max_pending_heads at least 1")
        if self.ors_wire and self.mode != "simulation":
            raise ValueError("ors_wire controls episodes: it is served in simulation mode only")

    @property
    def principal_quota(self) -> int:
        """The sessions one principal may hold (`principal_sessions`, or its default)."""
        if self.principal_sessions is not None:
            return self.principal_sessions
        return max(1, self.max_sessions // 8)
