"""Draws the architecture from the code: the import graph between folders, as Graphviz.

Reads the real imports with grimp (through build/typecheck, the tree laid out as the installed
package: `scripts/layout_tree.sh`), groups modules by folder (the SDK's top-level modules and
packages, the subpackages of servers/, harness/ and calendar_gym/), keeps one edge per pair of
folders that import each other, drops the edges implied by others (a transitive reduction, so the
picture stays readable) and writes `docs/diagrams/imports.dot` and, when `dot` is installed,
`imports.svg`. `--check` exits 1 when the committed `.dot` is not what the code draws today (the
test suite runs it), so the picture in docs/architecture.md cannot go stale.

Usage: python scripts/architecture.py [--check]      (`just architecture` redraws both files)
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOT = ROOT / "docs" / "diagrams" / "imports.dot"
ROOTS = ("mcpgym", "calendar_gym", "code_gym")

#: cluster -> (title, colour); a folder belongs to the first cluster whose prefix it has
CLUSTERS = {
    "calendar_gym": ("calendar_gym/ — the flagship environment and its benchmark", "#b07d2b"),
    "code_gym": ("code_gym/ — agents write and run code in a sandbox", "#a0522d"),
    "mcpgym.harness": ("harness/ — mcpgym.harness: driving agents", "#5b8c5a"),
    "mcpgym.servers": ("servers/ — mcpgym.servers: hosting", "#7b5ea7"),
    "mcpgym": ("sdk/ — mcpgym: the SDK (no web framework)", "#4a6fa5"),
}


def folder(module: str) -> str:
    """The folder a module is drawn in: `mcpgym.servers.mcp.routes` -> `mcpgym.servers.mcp`."""
    parts = module.split(".")
    nested = parts[0] == "mcpgym" and len(parts) > 1 and parts[1] in ("servers", "harness")
    depth = 3 if nested else 2
    return ".".join(parts[:depth])


def folder_edges() -> dict[str, set[str]]:
    """`{folder: folders it imports}` from the code, through the installed layout."""
    subprocess.run(["bash", str(ROOT / "scripts" / "layout_tree.sh")], check=True)
    sys.path[:0] = [str(ROOT / "build" / "typecheck"), str(ROOT)]
    import grimp

    roots = [r for r in ROOTS if (ROOT / r).is_dir() or r == "mcpgym"]
    graph = grimp.build_graph(*roots)
    edges: dict[str, set[str]] = defaultdict(set)
    for module in graph.modules:
        a = folder(module)
        edges.setdefault(a, set())
        for imported in graph.find_modules_directly_imported_by(module):
            b = folder(imported)
            if a != b and b not in (r for r in roots):  # a package's __init__ is its folder
                edges[a].add(b)
    return {k: v for k, v in edges.items() if k not in roots}


def reduce(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """Drop `a -> c` when `a -> ... -> c` runs through another folder (the graph is acyclic)."""

    def reach(start: str, skip: tuple[str, str]) -> set[str]:
        seen: set[str] = set()
        todo = [start]
        while todo:
            node = todo.pop()
            for nxt in edges.get(node, ()):
                if (node, nxt) == skip or nxt in seen:
                    continue
                seen.add(nxt)
                todo.append(nxt)
        return seen

    return {a: {b for b in bs if b not in reach(a, (a, b))} for a, bs in edges.items()}


def cluster_of(name: str) -> str:
    return next(c for c in CLUSTERS if name == c or name.startswith(c + "."))


def render(edges: dict[str, set[str]]) -> str:
    nodes = sorted(set(edges) | {b for bs in edges.values() for b in bs})
    lines = [
        "// Written by scripts/architecture.py from the import graph; do not edit.",
        "digraph imports {",
        '  graph [rankdir=TB, fontname="Helvetica", fontsize=11, nodesep=0.25, ranksep=0.5,'
        ' bgcolor="white", pad=0.2, newrank=true];',
        '  node  [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10,'
        ' fillcolor="white"];',
        '  edge  [color="#777777", arrowsize=0.6];',
    ]
    by_cluster: dict[str, list[str]] = defaultdict(list)
    for node in nodes:
        by_cluster[cluster_of(node)].append(node)
    for i, (cluster, (title, colour)) in enumerate(CLUSTERS.items()):
        if not by_cluster.get(cluster):
            continue
        head = f'label="{title}"; style="rounded"; color="{colour}";'
        lines.append(f"  subgraph cluster_{i} {{ {head}")
        for node in by_cluster[cluster]:
            label = node.removeprefix(cluster + ".") if node != cluster else node
            lines.append(f'    "{node}" [label="{label}", color="{colour}"];')
        lines.append("  }")
    for a in sorted(edges):
        for b in sorted(edges[a]):
            lines.append(f'  "{a}" -> "{b}";')
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if imports.dot is stale")
    args = parser.parse_args()
    text = render(reduce(folder_edges()))
    if args.check:
        if not DOT.is_file() or DOT.read_text() != text:
            print(f"{DOT.relative_to(ROOT)} is out of date: run `just architecture`")
            return 1
        return 0
    DOT.write_text(text)
    print(f"wrote {DOT.relative_to(ROOT)}")
    if shutil.which("dot"):
        svg = DOT.with_suffix(".svg")
        subprocess.run(["dot", "-Tsvg", str(DOT), "-o", str(svg)], check=True)
        print(f"wrote {svg.relative_to(ROOT)}")
    else:
        print("no `dot` here (apt-get install graphviz): the .svg was not redrawn")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
