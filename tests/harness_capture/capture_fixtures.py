"""Recorded model calls from the real CLIs (tests/harness_capture/fixtures/) and their golden
segment lists.

A fixture is `{"cli", "version", "calls": [LLMCall dumps]}` with the episode key replaced by
`EPISODE_KEY` and the run's temporary folder by `/HOME`, so it holds no secret and no machine path.
Its golden file `<cli>_tool.segments.json` lists, per call, each segment's role, kind, source,
tool, length and first characters. After a deliberate change to the segmentation, regenerate the
golden files with `cd tests/harness_capture && PYTHONPATH=.. python capture_fixtures.py` and
review the diff.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from mcpgym.harness.capture import LLMCall
from mcpgym.harness.trajectory import segment_call
from scripted_model.clis import Cli, find_cli

FIXTURES = Path(__file__).parent / "fixtures"
EPISODE_KEY = "EPISODE_KEY"
_DROP_HEADERS = {"host", "content-length"}


def fixture_path(cli: Cli) -> Path:
    return FIXTURES / f"{cli}_tool.json"


def golden_path(cli: Cli) -> Path:
    return FIXTURES / f"{cli}_tool.segments.json"


def _scrub(text: str, key: str, home: Path) -> str:
    return (
        text.replace(key, EPISODE_KEY)
        .replace(str(home.resolve()), "/HOME")
        .replace(str(home), "/HOME")
    )


def _version(cli: Cli) -> str:
    exe = find_cli(cli)
    if exe is None:
        return "unknown"
    done = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "unknown"


def load_calls(cli: Cli) -> list[LLMCall]:
    data = json.loads(fixture_path(cli).read_text(encoding="utf-8"))
    return [LLMCall.model_validate(c) for c in data["calls"]]


def summarise(call: LLMCall) -> list[dict[str, Any]]:
    """The golden view of one call's segments."""
    return [
        {
            "role": s.role,
            "kind": s.kind,
            "source": s.source,
            "tool": s.tool,
            "chars": len(s.text),
            "start": s.text[:48],
        }
        for s in segment_call(call, call.dialect)
    ]


def write_fixture(cli: Cli, calls: list[LLMCall], *, key: str, home: Path) -> None:
    """Save `calls` (scrubbed) as the CLI's fixture and regenerate its golden segment list."""
    FIXTURES.mkdir(exist_ok=True)
    dumped = []
    for call in calls:
        data = call.model_dump(mode="json")
        data["headers"] = {k: v for k, v in data["headers"].items() if k not in _DROP_HEADERS}
        dumped.append(json.loads(_scrub(json.dumps(data), key, home)))
    fixture = {"cli": cli, "version": _version(cli), "calls": dumped}
    fixture_path(cli).write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
    write_golden(cli)


def write_golden(cli: Cli) -> None:
    """Regenerate the golden segment list from the stored fixture."""
    golden = [summarise(c) for c in load_calls(cli)]
    golden_path(cli).write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":  # after changing the segmentation: review `git diff fixtures/`
    for name in ("claude", "codex", "opencode"):
        if fixture_path(name).exists():
            write_golden(name)
