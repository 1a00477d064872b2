"""An environment's own exceptions: logged with their traceback, returned with it on `--debug`.

When `reset`, `step`, `close`, the factory or a tool raises something that is not an mcpgym
error, the caller gets one structured line (`EXECUTION_ERROR: NotesEnv.reset raised
RuntimeError: database not found`). Its author needs more: `record` logs the exception with its
traceback on the `mcpgym.env` logger, at ERROR, naming the session and episode it happened in::

    ERROR mcpgym.env: NotesEnv.reset raised RuntimeError: database not found (session s3,
    episode #2c26b46b)
    Traceback (most recent call last):
      File "notes_env.py", line 9, in reset ...

Episode ids are never written as they are: an operator-opened MCP episode's id is the credential
that lets its player in (servers/guards/log_redact.py keeps it out of the access log), so the log
names an episode by the first 8 hex digits of its id's SHA-256 (`#2c26b46b`), which the operator
can compute from an id they hold, and nobody can turn back into one.

A server started with `--debug` also returns the traceback in the error's `traceback` field,
but only to the operator's own requests: it calls `expose_tracebacks(True)` in their context
(servers/debug.py), never in a principal's.

Example:
    >>> import logging
    >>> from mcpgym.errors import ExecutionError
    >>> try:
    ...     raise RuntimeError("database not found")
    ... except RuntimeError as exc:
    ...     detail = record(None, "NotesEnv.reset", exc)
    >>> detail  # the traceback went to the log; the caller gets it only when exposed
    {}
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import traceback
from contextvars import ContextVar
from typing import Any

__all__ = [
    "TOOL",
    "episode_label",
    "expose_tracebacks",
    "record",
    "reset_exposure",
    "session_label",
    "tag_session",
]

log = logging.getLogger("mcpgym.env")

TOOL: dict[str, Any] = {"level": logging.WARNING, "repeat_level": logging.INFO}
"""`record`'s levels for a tool's exception: the first of each kind a warning, repeats info."""

_EXPOSE: ContextVar[bool] = ContextVar("mcpgym_expose_tracebacks", default=False)
_SESSION_ATTR = "_mcpgym_session"  # set on the instance by the server that made it


def expose_tracebacks(on: bool) -> Any:
    """Return tracebacks to the caller in this context (`--debug`, the operator's requests);
    gives the token `ContextVar.reset` takes."""
    return _EXPOSE.set(on)


def reset_exposure(token: Any) -> None:
    """Undo `expose_tracebacks` (pass the token it gave)."""
    _EXPOSE.reset(token)


def tag_session(env: Any, label: str) -> None:
    """Name the session an instance serves (e.g. `s3 (ws)`), for its log lines."""
    with contextlib.suppress(TypeError):  # __slots__ without __dict__: no session named
        vars(env)[_SESSION_ATTR] = label


def session_label(env: Any) -> str | None:
    """The session `tag_session` gave `env`, if any."""
    found = getattr(env, "__dict__", {}).get(_SESSION_ATTR)
    return found if isinstance(found, str) else None


def episode_label(episode_id: Any) -> str | None:
    """An episode id as the log may show it: `#` and 8 hex digits of its SHA-256."""
    if not isinstance(episode_id, str) or not episode_id:
        return None
    return "#" + hashlib.sha256(episode_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def _where(env: Any) -> str:
    parts = []
    session = session_label(env) if env is not None else None
    if session:
        parts.append(f"session {session}")
    state = getattr(env, "__dict__", {}).get("_state") if env is not None else None
    episode = episode_label(getattr(state, "episode_id", None))
    if episode:
        parts.append(f"episode {episode}")
    return f" ({', '.join(parts)})" if parts else ""


def record(
    env: Any,
    call: str,
    exc: BaseException,
    *,
    level: int = logging.ERROR,
    repeat_level: int | None = None,
) -> dict[str, Any]:
    """Log `exc`, raised by `call` of `env` (e.g. `NotesEnv.reset`), with its traceback.

    With `repeat_level` (a tool's exception: often the agent's bad input, thousands of times
    in a run) only the first occurrence of each kind — the same call, exception class and
    raising line — is logged at `level`; the repeats go at `repeat_level` (`--log-level info`
    shows every one, each with its traceback).

    Returns the detail fields to add to the structured error: `{"traceback": ...}` when this
    context exposes tracebacks (`expose_tracebacks`), else none.
    """
    if repeat_level is not None:
        frames = traceback.extract_tb(exc.__traceback__)
        last = frames[-1] if frames else None
        kind = (call, type(exc).__qualname__, last and (last.filename, last.lineno))
        if kind in _SEEN:
            level = repeat_level
        elif len(_SEEN) < _MAX_SEEN:
            _SEEN.add(kind)
    if log.isEnabledFor(level):
        log.log(
            level,
            "%s raised %s: %s%s",
            call,
            type(exc).__name__,
            exc,
            _where(env),
            exc_info=(type(exc), exc, exc.__traceback__),
        )
    if _EXPOSE.get():
        return {"traceback": "".join(traceback.format_exception(exc))}
    return {}


_SEEN: set[tuple[Any, ...]] = set()
_MAX_SEEN = 4096  # kinds remembered; past it every occurrence is logged at its first level
