"""The live progress line of an evaluation: done/total, errors, success, mean reward, ETA.

`RichProgress` draws it with rich on stderr, redrawn in place on a terminal (elsewhere, e.g. in
CI logs, rich prints the final line once); `NullProgress` is the quiet mode.

Example:
    >>> p = NullProgress()
    >>> p.start(total=10, done=3)
    >>> p.advance(ProgressStats(done=4, total=10))
    >>> p.stop()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

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

    def start(self, total: int, done: int) -> None:
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[stats]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        )
        self._task = self._progress.add_task(
            self.description, total=total, completed=done, stats=""
        )
        self._progress.start()

    def advance(self, stats: ProgressStats) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=stats.done, stats=stats.line())

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
