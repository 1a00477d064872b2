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
        token: bearer token required on `/mcp` and `/ws` when set.
        allowed_origins: browser origins accepted besides localhost ones.
        allowed_hosts: `Host` header values accepted besides loopback ones (DNS-rebinding guard).
        principals: token → reset options; each token's holder gets its own production instance
            (e.g. `{"tok-a": {"user": "alice@acme.test"}}`). Implies bearer auth.
        production_ws: in production mode, serve `/ws` too (requires `token`).
        web: serve the browser UI at `/web` (servers/web; not imported when off).
        web_tasks: `MODULE:ATTR` naming episode specs (objects or dicts with `id`, `reset`,
            `prompt`, or a callable returning them) the web UI offers as tasks to play.
    """

    mode: Mode = "simulation"
    max_sessions: int = 256
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

    def __post_init__(self) -> None:
        if self.mode not in ("simulation", "production"):
            raise ValueError(f"mode must be 'simulation' or 'production', not {self.mode!r}")
        if self.max_sessions < 1:
            raise ValueError("max_sessions must be at least 1")
        if self.production_ws and not (self.token or self.principals):
            raise ValueError("production_ws requires a token: /ws controls episodes")
