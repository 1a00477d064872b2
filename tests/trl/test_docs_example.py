"""docs/training.md's TRL example, run verbatim: taken from the page as a reader copies it and
run with nothing added (a fresh working folder, no hub: the `trl` suite is offline). It must
build its tiny model, print the prompt's token count for the chosen tools, train two GRPO steps
with a finite loss, and the model's tool calls must reach the environment with the arguments
TRL parsed from its text."""

from __future__ import annotations

import contextlib
import io
import math
import re
from pathlib import Path
from typing import Any

import pytest
from grpo_marks import GRPO_RUN

from helpers.compat import TRL_CLIENT, compat

pytestmark = [pytest.mark.trl, *GRPO_RUN]
pytest.importorskip("torch")
pytest.importorskip("trl")

PAGE = Path(__file__).resolve().parents[2] / "docs" / "training.md"
SECTION = "## TRL end to end on Calendar Gym"


def example() -> str:
    """The first Python block of the page's TRL section, exactly as written."""
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None, f"docs/training.md: no Python block under {SECTION!r}"
    return found.group(1)


@compat(
    TRL_CLIENT,
    "GRPOTrainer(environment_factory=...)",
    "works",
    "docs/training.md's example verbatim on a CPU with no hub: a tiny local model, a tool "
    "subset, the prompt's token count printed, two GRPO steps with a finite loss, tools called "
    "with the arguments TRL parsed",
)
def test_the_documented_example_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = example()
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    namespace: dict[str, Any] = {"__name__": "__main__"}
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(PAGE), "exec"), namespace)
    printed = out.getvalue()
    counts = re.findall(r"prompt: (\d+) tokens with (tools \[.*\]|all (\d+) tools)", printed)
    assert len(counts) == 2, printed
    (subset, names, _), (whole, _, total) = counts
    assert names == "tools ['calendarList_list', 'finish']", printed
    assert int(total) == len(namespace["trainer_tools"](namespace["everything"])) > 2
    assert 0 < int(subset) < int(whole), printed  # the subset is the shorter prompt
    trainer = namespace["trainer"]
    steps = [h for h in trainer.state.log_history if "loss" in h]
    assert len(steps) == 2, trainer.state.log_history
    assert all(math.isfinite(h["loss"]) for h in steps)
    assert all(h["tools/call_frequency"] > 0 for h in steps), steps
    calls = namespace["calls"]
    assert calls, "no tool call reached the environment"
    for call in calls:  # parsed arguments, checked by the environment's own schema
        assert call.name in ("calendarList_list", "finish") and isinstance(call.arguments, dict)
        if call.name == "finish" and call.error is None:
            assert call.arguments["status"] in ("cannot_complete", "done")
    assert any(call.error is None for call in calls), [c.error for c in calls]
    assert printed.count("loss ") == 2 and "first call: " in printed
