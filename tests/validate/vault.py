"""The fixture table: each broken Vault, its manifest, and the one check that must catch it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from mcpgym.manifest import Manifest, parse_manifest

FIXTURES = Path(__file__).parent / "fixtures"

BASE: dict[str, Any] = {
    "manifest_version": 1,
    "name": "vault",
    "version": "1.0.0",
    "entry_point": "vault_fixtures:Vault",
    "modes": ["simulation", "production"],
    "tools": [{"name": "reveal"}, {"name": "submit", "finishes": True}],
    "reward": {"min": 0.0, "max": 1.0},
    "resources": {"cpu": 0.5, "memory_mb": 128},
    "timeouts": {"startup_s": 120, "reset_s": 10, "step_s": 5},
    "episode": {"max_steps": 10},
    "policies": {"oracle": "vault_fixtures:oracle"},
    "canaries": [{"option": "code", "kind": "string"}],
    "tasks": {"default": {"source": "seeds", "seeds": [0, 1, 2]}},
}


def manifest(
    cls: str = "Vault", *, tools: list[dict[str, Any]] | None = None, **changes: Any
) -> Manifest:
    """The base manifest for fixture class `cls`, with extra tools and top-level changes."""
    data = copy.deepcopy(BASE)
    data["entry_point"] = f"vault_fixtures:{cls}"
    data["tools"] += tools or []
    for key, value in changes.items():
        if isinstance(value, dict) and value and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return parse_manifest(data, root=str(FIXTURES))


# defect -> (target: a manifest file or a Manifest, the check that must fail)
DEFECTS: dict[str, tuple[Path | Manifest, str]] = {
    "manifest typo": (FIXTURES / "manifests" / "typo.yaml", "check_manifest"),
    "unknown key": (FIXTURES / "manifests" / "unknown_key.yaml", "check_manifest"),
    "no oracle": (manifest(policies={}), "check_policies"),
    "oracle below max": (manifest("OracleBelowMax"), "check_oracle_reaches_max"),
    "empty answer paid the max": (manifest("EmptyPaid"), "check_floor_gap"),
    "blind finish paid the max": (
        manifest("BlindFinish", tools=[{"name": "finish", "finishes": True}]),
        "check_floor_gap",
    ),
    "answer in the observation": (manifest("LeakObservation"), "check_no_leakage"),
    "answer in a tool description": (manifest("LeakDescription"), "check_no_leakage"),
    "answer in an error hint": (manifest("LeakErrorHint"), "check_no_leakage"),
    "readable oracle": (
        manifest("ReadableOracle", tools=[{"name": "debug_solution"}]),
        "check_oracle_containment",
    ),
    "noisy reward": (manifest("NoisyReward"), "check_verifier_determinism"),
    "seed ignored": (manifest("SeedIgnored"), "check_seed_control"),
    "state carried across episodes": (manifest("StateCarried"), "check_isolation"),
    "reward is a bool": (manifest("RewardBool"), "check_reward_range"),
    # strict JSON (issue 9): a NaN reward cannot leave the server, so the episode check fails
    "reward is NaN": (manifest("RewardNaN"), "check_episode"),
    "reserved tool name": (
        manifest("ReservedTool", tools=[{"name": "list_tools"}]),
        "check_reserved_names",
    ),
    "undeclared tool": (manifest("UndeclaredTool"), "check_declared_tools"),
    "tool visible in the wrong mode": (
        manifest("WrongMode", tools=[{"name": "peek_length", "modes": ["simulation"]}]),
        "check_tool_modes",
    ),
    "a hang": (
        manifest("Hang", tools=[{"name": "wait"}], timeouts={"step_s": 3}),
        "check_step_timeout",
    ),
    "a crash on bad input": (manifest("CrashOnBadInput"), "check_invalid_action"),
}

# defects the gamer panel catches too, with the gamers that exploit them: the panel measures
# what a single degenerate episode (check_floor_gap) or a planted canary (check_no_leakage)
# shows, as rates over the task set, so these defects fail both checks
PANEL_ALSO: dict[str, set[str]] = {
    "empty answer paid the max": {"constant:empty", "random"},
    "blind finish paid the max": {"constant:empty", "error-exploit"},
    "answer in an error hint": {"error-exploit"},
    "readable oracle": {"random"},  # it reads debug_solution, then submits what it saw
}
