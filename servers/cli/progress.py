"""`Stages`: the progress of a long command's stages on stderr (validate, build, a pool's start).

The library reports stages through a plain callable, `hook(stage, outcome)`: `outcome` is None
when the stage begins and a word (`pass`, `ready`, `done`, ...) when it ends; stages may overlap
(a pool starts its servers at once). `Stages` is such a callable:

- on a terminal, a live line redrawn in place (a spinner, the stages ended out of the total, the
  ones running, the elapsed time) that disappears when the command ends, so the command's own
  output (a report, a tag) is all that stays;
- elsewhere (a pipe, a CI log), one plain line per ended stage, `mcpgym validate: [3/27]
  check_schema pass (0.2 s)`, and nothing redrawn.

It writes to stderr only: stdout keeps the command's result, byte for byte, wherever it goes.

Example:
    >>> import io
    >>> err = io.StringIO()
    >>> with Stages("mcpgym build", stream=err) as stage:
    ...     stage("the wheel of ./notes", None)
    ...     stage("the wheel of ./notes", "built")
    >>> err.getvalue().split(" (")[0]
    'mcpgym build: [1] the wheel of ./notes built'
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import IO, Any, Self

__all__ = ["Stages"]


class Stages:
    """The `hook(stage, outcome)` of a command, drawn on `stream` (default stderr); see above.

    Args:
        command: the command's name, first on every line (`mcpgym validate`).
        total: how many stages there will be, when known (the count grows past it if wrong).
        stream: where to write (stderr); live only when it is a terminal.
    """

    def __init__(self, command: str, total: int | None = None, stream: IO[str] | None = None):
        self.command = command
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.ended = 0
        self._began: dict[str, float] = {}
        self._live: Any = None  # rich.progress.Progress on a terminal
        self._task: Any = None
        self._mute = False

    def __enter__(self) -> Self:
        if _is_terminal(self.stream):
            from rich.console import Console  # here: `mcpgym --help` must not import rich
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            console = Console(file=self.stream, force_terminal=True)
            self._live = Progress(
                SpinnerColumn(),
                TextColumn("[bold]{task.fields[command]}[/] {task.fields[count]}"),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            self._task = self._live.add_task(
                "preparing", total=self.total, command=self.command, count=self._count()
            )
            self._live.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Take the live line away (a terminal); idempotent."""
        if self._live is not None:
            self._live.stop()
            self._live = None

    def __call__(self, stage: str, outcome: str | None) -> None:
        if outcome is None:
            self._began[stage] = time.monotonic()
        else:
            took = time.monotonic() - self._began.pop(stage, time.monotonic())
            self.ended += 1
            if self._live is None and not self._mute:
                line = f"{self.command}: {self._count()} {stage} {outcome} ({took:.1f} s)"
                try:
                    print(line, file=self.stream, flush=True)
                except (OSError, ValueError):  # stderr closed or gone: the command goes on
                    self._mute = True
        if self._live is not None:
            running = list(self._began)
            more = f" (+{len(running) - 2})" if len(running) > 2 else ""
            shown = ", ".join(running[-2:]) + more
            self._live.update(
                self._task, description=shown or stage, completed=self.ended, count=self._count()
            )

    def _count(self) -> str:
        total = max(self.total or 0, self.ended)
        return f"[{self.ended}/{total}]" if self.total else f"[{self.ended}]"


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or file-less stream
        return False
