"""The live progress line of an evaluation: done/total, errors, success, mean reward, ETA.

`RichProgress` draws it with rich on stderr, redrawn in place on a terminal (elsewhere, e.g. in
CI logs, rich prints the final line once); `NullProgress` is the quiet mode. On a console
narrower than 120 columns the line is the compact one (a short bar, `ok`/`r` figures, no ETA),
which fits 80 columns without truncation.

Example:
    >>> p = NullProgress()
    >>> p.start(total=10, done=3)
    >>> p.advance(ProgressStats(done=4, total=10))
    >>> p.stop()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Column

__all__ = ["NullProgress", "ProgressReporter", "ProgressStats", "RichProgress"]


@dataclass(frozen=True, slots=True)
class ProgressStats:
    """The running figures shown after each episode."""

    done: int
    total: int
    errors: int = 0
    successes: int = 0
    reward_sum: float = 0.0
    played: int = 0
    """Episodes played by this invocation (the rest were resumed from disk)."""

    def short(self) -> str:
        """`err 0 ok 87% r 0.91`: `line()` for narrow consoles."""
        n = max(1, self.done)
        return f"err {self.errors} ok {self.successes / n:.0%} r {self.reward_sum / n:.2f}"

    def line(self) -> str:
        """`errors 0 · success 87% · reward 0.912` (over the episodes played so far)."""
        n = max(1, self.done)
        return (
            f"errors {self.errors} · success {self.successes / n:.0%} · "
            f"reward {self.reward_sum / n:.3f}"
        )


class ProgressReporter(Protocol):
    """What the runner calls."""

    def start(self, total: int, done: int) -> None: ...

    def advance(self, stats: ProgressStats) -> None: ...

    def stop(self) -> None: ...


class NullProgress:
    """Quiet mode: shows nothing."""

    def start(self, total: int, done: int) -> None:
        return None

    def advance(self, stats: ProgressStats) -> None:
        return None

    def stop(self) -> None:
        return None


class RichProgress:
    """A rich progress bar on stderr."""

    def __init__(self, description: str = "eval", console: Console | None = None) -> None:
        self.description = description
        self.console = console or Console(stderr=True)
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._compact = False

    def start(self, total: int, done: int) -> None:
        self._compact = self.console.width < 120
        if self._compact:  # 80 columns: description ≤ 24, bar 10, M/N, ~24 of figures, elapsed
            columns: tuple[Any, ...] = (
                TextColumn("[bold]{task.description}", table_column=Column(width=24, no_wrap=True)),
                BarColumn(bar_width=10),
                MofNCompleteColumn(),
                TextColumn("{task.fields[stats]}"),
                TimeElapsedColumn(),
            )
            self.description = _clip(self.description, 24)
        else:
            columns = (
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[stats]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
            )
        self._progress = Progress(*columns, console=self.console, transient=False)
        self._task = self._progress.add_task(
            self.description, total=total, completed=done, stats=""
        )
        self._progress.start()

    def advance(self, stats: ProgressStats) -> None:
        if self._progress is not None and self._task is not None:
            text = stats.short() if self._compact else stats.line()
            self._progress.update(self._task, completed=stats.done, stats=text)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def _clip(text: str, width: int) -> str:
    """`text` cut to `width` characters without an ellipsis (the name's start says enough)."""
    return text if len(text) <= width else text[:width]
