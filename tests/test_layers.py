"""Imports point one way (DESIGN.md §2): calendar_gym → harness → servers → sdk, never back,
and the sdk imports no web framework."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# folder → import prefixes it must never import
FORBIDDEN = {
    "sdk": ("mcpgym.servers", "mcpgym.harness", "calendar_gym", "starlette", "uvicorn"),
    "servers": ("mcpgym.harness", "calendar_gym"),
    "harness": ("calendar_gym",),
}


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def _violations(folder: str) -> list[str]:
    bad: list[str] = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for lineno, name in _imports(path):
            if any(name == p or name.startswith(p + ".") for p in FORBIDDEN[folder]):
                bad.append(f"{path.relative_to(ROOT)}:{lineno} imports {name}")
    return bad


@pytest.mark.parametrize("folder", sorted(FORBIDDEN))
def test_imports_point_down(folder: str) -> None:
    assert _violations(folder) == [], "imports pointing up the layers (DESIGN.md §2)"


def test_checker_catches_an_upward_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from mcpgym.servers import create_app\nimport starlette.routing\n")
    names = [n for _, n in _imports(bad)]
    assert any(n.startswith(p) for n in names for p in FORBIDDEN["sdk"])
