"""Bases for harnesses that are programs: one persistent process fed turn after turn, or one
process per turn. Both speak NDJSON on stdout (every supported CLI does), run in a private
`EpisodeHome`, and leave nothing behind on `stop()`.

Subclasses say how to launch the program and how to read its output lines:

- `PersistentCommandAdapter`: `_launch(home, mcp, model) -> (argv, env)`, `_encode(message)`
  (the stdin line of one user message) and `_parse(obj)` (events of one stdout JSON object; the
  turn ends with the first `TurnComplete`).
- `PerTurnCommandAdapter`: `_prepare(home, mcp, model) -> env` (write config files),
  `_argv(message, turn)`, optionally `_stdin(message)`, and `_parse(obj)`; the turn ends when
  the process exits (0: a `TurnComplete` is made from the last text — or from the stdout lines
  that are not JSON — if the program gave none; any other exit code is a crash).
"""

from __future__ import annotations

import abc
import json
import os
import shutil
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from mcpgym.harness.adapters.base import (
    AgenticHarnessAdapter,
    HarnessError,
    McpServer,
    ModelEndpoint,
    TextEvent,
    TurnComplete,
)
from mcpgym.harness.adapters.home import EpisodeHome
from mcpgym.harness.adapters.process import HarnessProcess

__all__ = [
    "PerTurnCommandAdapter",
    "PersistentCommandAdapter",
    "json_line",
    "json_lines",
    "resolve_executable",
]


def resolve_executable(program: str, env: Mapping[str, str] | None = None) -> str:
    """`program` as an absolute path (a harness runs in its own working directory), looked up
    on `PATH` (the harness's, else ours) when it has no slash; `HarnessError` when missing."""
    if os.sep in program:
        path = os.path.abspath(program)
        found = path if os.access(path, os.X_OK) else None
    else:
        found = shutil.which(program, path=(env or {}).get("PATH") or os.environ.get("PATH"))
    if found is None:
        raise HarnessError(f"harness program {program!r} not found (is it installed?)")
    return found


def json_line(line: str) -> dict[str, Any] | None:
    """The JSON object on `line`, or `None` for anything else (log lines, blank lines)."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


async def json_lines(proc: HarnessProcess) -> AsyncIterator[dict[str, Any]]:
    """The JSON objects `proc` prints, until its stdout closes."""
    while (line := await proc.readline()) is not None:
        obj = json_line(line)
        if obj is not None:
            yield obj


class _CommandAdapter(AgenticHarnessAdapter):
    """What both bases share: the episode's home, the extra environment, the clean-up."""

    def __init__(self, *, env: Mapping[str, str] | None = None, kill_grace_s: float = 3.0) -> None:
        super().__init__()
        self.extra_env = dict(env or {})
        self.kill_grace_s = kill_grace_s
        self.home: EpisodeHome | None = None
        self.session_id: str | None = None
        self._proc: HarnessProcess | None = None

    @abc.abstractmethod
    def _parse(self, obj: dict[str, Any]) -> Iterable[BaseModel]:
        """The events one JSON line of the program's output stands for."""

    async def _stop(self) -> None:
        proc, self._proc = self._proc, None
        try:
            if proc is not None:
                await proc.kill(self.kill_grace_s)  # SIGKILLs at once if cancelled
        finally:
            if self.home is not None:
                self.home.remove()
            self.home, self.session_id = None, None

    @property
    def pid(self) -> int | None:
        """The PID of the harness process running now (`None` between per-turn processes)."""
        return self._proc.pid if self._proc is not None and self._proc.alive() else None


class PersistentCommandAdapter(_CommandAdapter):
    """One process per episode; each turn is one stdin line and the stdout lines that answer it."""

    @abc.abstractmethod
    def _launch(
        self, home: EpisodeHome, mcp: McpServer, model: ModelEndpoint | None
    ) -> tuple[Sequence[str], Mapping[str, str]]:
        """The program's argv and environment (write any config files into `home`)."""

    @abc.abstractmethod
    def _encode(self, message: str) -> str:
        """The stdin line that sends one user message."""

    async def _start(self, mcp: McpServer, model: ModelEndpoint | None) -> None:
        self.home = EpisodeHome(self.name)
        argv, env = self._launch(self.home, mcp, model)
        argv = [resolve_executable(argv[0], env), *argv[1:]]
        self._proc = await HarnessProcess.spawn(argv, env=env, cwd=self.home.work, stdin=True)

    async def _turn(self, message: str) -> AsyncGenerator[Any, None]:
        proc = self._proc
        assert proc is not None
        if not proc.alive():
            await proc.wait()
            raise proc.crashed("the harness exited between turns")
        await proc.write_line(self._encode(message))
        async for obj in json_lines(proc):
            for event in self._parse(obj):
                yield event
                if isinstance(event, TurnComplete):
                    return
        await proc.wait()
        raise proc.crashed("the harness exited during the turn")

    def _alive(self) -> bool:
        return self._proc is not None and self._proc.alive()


class PerTurnCommandAdapter(_CommandAdapter):
    """A new process per turn; the conversation lives in the program's session store."""

    def __init__(self, *, env: Mapping[str, str] | None = None, kill_grace_s: float = 3.0) -> None:
        super().__init__(env=env, kill_grace_s=kill_grace_s)
        self.turns = 0
        self._env: dict[str, str] = {}

    @abc.abstractmethod
    def _prepare(
        self, home: EpisodeHome, mcp: McpServer, model: ModelEndpoint | None
    ) -> Mapping[str, str]:
        """Write the program's configuration into `home`; return its environment."""

    @abc.abstractmethod
    def _argv(self, message: str, turn: int) -> Sequence[str]:
        """The command line of turn `turn` (1-based); later turns resume `self.session_id`."""

    def _stdin(self, message: str) -> str | None:
        """What to write to the turn's stdin before closing it (`None`: stdin is /dev/null)."""
        return None

    async def _start(self, mcp: McpServer, model: ModelEndpoint | None) -> None:
        self.turns = 0
        self.home = EpisodeHome(self.name)
        self._env = dict(self._prepare(self.home, mcp, model))

    async def _turn(self, message: str) -> AsyncGenerator[Any, None]:
        assert self.home is not None
        self.turns += 1
        argv, text = list(self._argv(message, self.turns)), self._stdin(message)
        argv[0] = resolve_executable(argv[0], self._env)
        proc = self._proc = await HarnessProcess.spawn(
            argv, env=self._env, cwd=self.home.work, stdin=text is not None
        )
        if text is not None:
            await proc.write(text)
            await proc.close_stdin()
        last_text, plain, completed = "", list[str](), False
        try:
            while (line := await proc.readline()) is not None:
                obj = json_line(line)
                if obj is None:
                    plain.append(line)
                    continue
                for event in self._parse(obj):
                    if isinstance(event, TextEvent):
                        last_text = event.text
                    completed = completed or isinstance(event, TurnComplete)
                    yield event
            code = await proc.wait()
            if code != 0:
                raise proc.crashed("the harness failed")
            if not completed:
                text = last_text or "\n".join(plain).strip()
                if text and not last_text:
                    yield TextEvent(text=text)
                yield TurnComplete(response=text, session_id=self.session_id)
        finally:
            await proc.kill(self.kill_grace_s)  # helpers it left behind go with the turn
            self._proc = None

    def _alive(self) -> bool:
        return self.home is not None
