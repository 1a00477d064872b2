"""Reading an engine's build or push stream: its errors, and each build step as a stage.

An item's `stream` text is not a line. Docker sends one line per item; Podman's compatible API
may send several lines in one item, split one over two, and prefixes the steps of a multi-stage
build with the stage (`[1/2] STEP 3/7: RUN …`). The text is joined and cut at newlines before a
step line is recognised.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from mcpgym.providers.base import ProviderError

Stage = Callable[[str, str | None], None]
"""`progress(stage, None)` when a stage begins, `progress(stage, outcome)` when it ends."""


def quiet(stage: str, outcome: str | None) -> None:
    """A `Stage` that says nothing."""
    return None


# Docker's `Step 3/9 : RUN ...`; Podman's `STEP 3/9: RUN ...`, or `[1/2] STEP 3/7: ...` in a
# multi-stage build (the step count is per stage there).
_STEP = re.compile(r"^(?:\[(\d+)/(\d+)\] )?(?:Step|STEP) (\d+)/(\d+) ?: ?(.*)$")


def step_of(line: str) -> str | None:
    """The stage name for an engine's step line (`step 3/9: RUN …`, or `stage 1/2 step 3/7: …`),
    or None for any other line."""
    found = _STEP.match(line.strip())
    if not found:
        return None
    where = f"stage {found[1]}/{found[2]} " if found[1] else ""
    return f"{where}step {found[3]}/{found[4]}: {clip(found[5], 60)}"


def _lines(items: Iterable[dict[str, Any]], log: io.StringIO) -> Iterator[str | dict[str, Any]]:
    """Complete lines of the items' `stream` text, and each item that carries an error."""
    pending = ""
    for item in items:
        if "stream" in item:
            text = str(item["stream"])
            log.write(text)
            *complete, pending = (pending + text).split("\n")
            yield from complete
        if item.get("error") or (item.get("errorDetail") or {}).get("message"):
            yield item
    if pending:
        yield pending


def read_stream(items: Iterable[dict[str, Any]], what: str, progress: Stage = quiet) -> str:
    """Read the stream to its end, telling `progress` of each step; returns the log.

    Raises ProviderError with the engine's error and the log's tail when an item is an error.
    """
    log = io.StringIO()
    step: str | None = None
    for line in _lines(items, log):
        if isinstance(line, dict):
            if step is not None:
                progress(step, "failed")
            error = line.get("error") or (line.get("errorDetail") or {}).get("message")
            raise ProviderError(f"{what} failed: {error}\n{log.getvalue()[-3000:]}")
        name = step_of(line)
        if name is not None:
            if step is not None:
                progress(step, "done")
            step = name
            progress(step, None)
    if step is not None:
        progress(step, "done")
    return log.getvalue()


def clip(text: str, width: int) -> str:
    """`text` cut to `width` characters, an ellipsis marking the cut."""
    return text if len(text) <= width else text[: width - 1] + "…"
