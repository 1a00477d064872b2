"""The gamer panel's fixture table: the good Desk, each broken Desk, the gamer it lets through."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from mcpgym.manifest import Manifest, parse_manifest

FIXTURES = Path(__file__).parent / "fixtures"

DESK: dict[str, Any] = {
    "manifest_version": 1,
    "name": "desk",
    "version": "1.0.0",
    "entry_point": "desk_fixtures:Desk",
    "modes": ["simulation"],  # one server to start: the panel plays simulation episodes
    "tools": [
        {"name": "search", "modes": ["simulation"]},
        {"name": "send", "modes": ["simulation"]},
        {"name": "finish", "modes": ["simulation"], "finishes": True},
    ],
    "reward": {"min": 0.0, "max": 1.0},
    "resources": {"cpu": 0.5, "memory_mb": 128},
    "timeouts": {"startup_s": 120, "reset_s": 10, "step_s": 5},
    "episode": {"max_steps": 8},
    "policies": {"oracle": "desk_fixtures:oracle"},
    "tasks": {"default": {"source": "specs", "specs": "desk_fixtures:specs"}},
    "panel": {
        "finish": {"tool": "finish", "argument": "status", "solved": "done"},
        "lookups": [{"tool": "search", "query": "query", "items": ["items"], "text": ["name"]}],
        "writes": ["send"],
    },
}


def desk(cls: str = "Desk", *, flaw: str = "", twins: bool = True) -> Manifest:
    """The Desk manifest for fixture class `cls`, its tasks played with `flaw`."""
    data = copy.deepcopy(DESK)
    data["entry_point"] = f"desk_fixtures:{cls}"
    args = {"flaw": flaw, "twins": twins}
    data["tasks"] = {"default": {"source": "specs", "specs": "desk_fixtures:specs", "args": args}}
    return parse_manifest(data, root=str(FIXTURES))


# defect -> (manifest, the check that must fail, the gamer it must name); every flaw but the
# last is served by one shared server (`--url`), the last needs its own (a second process)
GAMED: dict[str, tuple[Manifest, str, str]] = {
    "partial credit for any finish": (desk(flaw="partial"), "check_gamer_panel", "constant:done"),
    "a trap without a twin": (desk(twins=False), "check_gamer_panel", "try-then:cannot_complete"),
    "errors paid as effort": (desk(flaw="errors"), "check_gamer_panel", "random"),
    "any colleague will do": (desk(flaw="any"), "check_gamer_panel", "replay"),
    "the answer in an error": (desk(flaw="hint"), "check_gamer_panel", "error-exploit"),
    "the gold sorts first": (desk(flaw="first"), "check_gamer_panel", "positional:first"),
    "a grader blind to extras": (desk(flaw="loose"), "check_collateral_mutations", ""),
    "hits in set order": (desk("HashOrder"), "check_process_determinism", ""),
}
