"""Writes docs/compatibility.md from the tests that prove each cell of the matrix.

A test marks itself with `helpers.compat.compat(seam, client, verdict, what)` (a decorator, or
in a module's `pytestmark`; the seam names a peer, its version and a direction). This script
reads those calls from the test files without importing them (so the page is the same on every
machine, whichever peers are installed), checks each with `compat` itself, and writes one table
per peer and version.
`--check` exits 1 when the page is out of date (the default suite runs it).

Usage: python scripts/compat_matrix.py [--check]
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
PAGE = ROOT / "docs" / "compatibility.md"
ARGS = ("seam", "client", "verdict", "what")
PEERS = ("OpenEnv", "Verifiers", "ORS", "TRL")  # the page's order; others follow by name
# a test's marker -> the `just` recipe that runs it (unmarked: the default suite)
SUITES = {
    "ors": "test-ors",
    "trl": "test-trl",
    "bridge": "test-bridge",
    "interop": "test-interop",
    "verifiers": "test-verifiers",
}


def _helpers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_compat", TESTS / "helpers" / "compat.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


COMPAT = _helpers()


@dataclass(frozen=True, order=True)
class Cell:
    """One marked test: the cell it proves and where it is."""

    peer: str
    version: str
    direction: str
    client: str
    verdict: str
    what: str
    test: str
    suite: str


def _value(node: ast.expr, where: str) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    raise ValueError(f"{where}: compat()'s client, verdict and what are string literals")


def _seam(node: ast.expr, where: str) -> Any:
    found = getattr(COMPAT, node.id, None) if isinstance(node, ast.Name) else None
    if not isinstance(found, COMPAT.Seam):
        raise ValueError(f"{where}: compat()'s seam is one of helpers.compat's Seam names")
    return found


def _is_compat(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == "compat") or (
        isinstance(func, ast.Attribute) and func.attr == "compat"
    )


def _marks(nodes: list[ast.expr], where: str) -> list[dict[str, str]]:
    found = []
    for node in nodes:
        if not _is_compat(node):
            continue
        assert isinstance(node, ast.Call)
        given = dict(zip(ARGS, node.args, strict=False))
        given.update({str(k.arg): k.value for k in node.keywords})
        if set(given) != set(ARGS):
            raise ValueError(f"{where}: compat() needs {', '.join(ARGS)}")
        seam = _seam(given["seam"], where)
        rest = {k: _value(given[k], where) for k in ARGS[1:]}
        COMPAT.compat(seam, **rest)  # the helper's own checks: direction and verdict known
        found.append({**seam._asdict(), **rest})
    return found


def _pytestmark(tree: ast.Module) -> list[ast.expr]:
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets
        ):
            value = stmt.value
            return list(value.elts) if isinstance(value, ast.List | ast.Tuple) else [value]
    return []


def _suite(nodes: list[ast.expr]) -> str:
    """The `just` recipe of the first suite marker among `nodes` (`pytest.mark.NAME`)."""
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute) and sub.attr in SUITES:
                inner = sub.value
                if isinstance(inner, ast.Attribute) and inner.attr == "mark":
                    return f"just {SUITES[sub.attr]}"
    return ""


def collect(tests: Path = TESTS) -> list[Cell]:
    """Every compat-marked test under `tests`, sorted."""
    cells: list[Cell] = []
    for path in sorted(tests.rglob("test_*.py")):
        rel = path.relative_to(tests.parent).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        module = _pytestmark(tree)
        shared = _marks(module, rel)
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if not node.name.startswith("test"):
                continue
            where = f"{rel}::{node.name}"
            suite = _suite(node.decorator_list) or _suite(module) or "just test"
            for values in [*shared, *_marks(node.decorator_list, where)]:
                cells.append(Cell(**values, test=where, suite=suite))
    return sorted(set(cells))


def _peer_order(peer: str) -> tuple[int, str]:
    return (PEERS.index(peer) if peer in PEERS else len(PEERS), peer)


def _cell_text(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render(cells: list[Cell]) -> str:
    """The page for `cells`."""
    lines = [
        "# Compatibility matrix",
        "",
        "<!-- generated by scripts/compat_matrix.py (`just compat`) from the tests marked with",
        "helpers.compat; do not edit: tests/test_compat_matrix.py fails when it is stale -->",
        "",
        "What works with each peer library, version by version, in each direction, with each",
        "client — and what is lossy or refused. Every row is a test that proves it (the suite",
        "named beside each peer runs it against the released peer installed from its registry);",
        "a seam with no row here is not claimed. Verdicts:",
        "",
        "- **works**: equal to the peer's own behaviour on everything the test compares;",
        "- **lossy**: runs, and the test pins exactly what differs;",
        "- **refused**: not offered, and the test pins the clear error a user gets.",
        "",
        "Directions: *their environment, served by mcpgym* (mcpgym's transports, limits and web",
        "UI in front of the peer's environment), *their client, against an mcpgym environment*",
        "(the peer's own client or trainer driving mcpgym), *mcpgym's client, against their",
        "server* (mcpgym's clients in front of the peer's own server).",
        "",
        "## Summary",
        "",
        "| Peer | Version | Direction | works | lossy | refused |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    groups: dict[tuple[str, str], list[Cell]] = {}
    for cell in cells:
        groups.setdefault((cell.peer, cell.version), []).append(cell)
    order = sorted(groups, key=lambda k: (_peer_order(k[0]), k[1]))
    for peer, version in order:
        for direction in COMPAT.DIRECTIONS:
            mine = [c for c in groups[(peer, version)] if c.direction == direction]
            if mine:
                counts = [str(sum(c.verdict == v for c in mine)) for v in COMPAT.VERDICTS]
                lines.append(f"| {peer} | {version} | {direction} | {' | '.join(counts)} |")
    for peer, version in order:
        lines += ["", f"## {peer} — {version}", ""]
        lines += ["| Direction | Client | Verdict | What the test proves | Test | Suite |"]
        lines += ["| --- | --- | --- | --- | --- | --- |"]
        rank = {d: i for i, d in enumerate(COMPAT.DIRECTIONS)}
        for c in sorted(groups[(peer, version)], key=lambda c: (rank[c.direction], c.client, c)):
            lines.append(
                f"| {c.direction} | {_cell_text(c.client)} | **{c.verdict}** | "
                f"{_cell_text(c.what)} | `{c.test}` | `{c.suite}` |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is stale")
    args = parser.parse_args(argv)
    cells = collect()
    page = render(cells)
    if args.check:
        if not PAGE.exists() or PAGE.read_text(encoding="utf-8") != page:
            print(f"{PAGE.relative_to(ROOT)} is out of date: run `just compat`", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(page, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)} ({len(cells)} cells)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
