"""The environments mcpgym ships, as the validation tests name them (a helper module, not tests)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(
    f.name for f in resources.files("mcpgym.examples").iterdir() if f.name.endswith(".mcpgym.yaml")
)
"""Every example manifest shipped in the package (mcpgym/examples/*.mcpgym.yaml)."""
SHIPPED = {"calendar": "calendar"} | {
    name.removesuffix(".mcpgym.yaml"): str(ROOT / "sdk" / "examples" / name) for name in EXAMPLES
}
"""Calendar Gym (by its registered name) and every example with a manifest."""
