"""Writes the API reference pages (docs/reference/*.md) from the packages' `__all__`.

Every public name of every public package gets a `::: module.Name` block, resolved to the module
that defines it (so lazily exported names are found too); mkdocstrings renders the docstring and
signature. `--check` exits 1 when a page is out of date (the test suite runs it), so a new
export cannot land undocumented. Also lays out build/apidocs/, the symlink tree the site is built
from (setuptools' package-dir mapping is invisible to static readers).

Usage: python scripts/docs_reference.py [--check]
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "reference"

#: page slug -> (title, package, one-line summary)
PACKAGES: dict[str, tuple[str, str, str]] = {
    "mcpgym": ("mcpgym", "mcpgym", "Authoring API, types, errors, content, checker."),
    "errors": ("mcpgym.errors", "mcpgym.errors", "The one tree of errors."),
    "client": ("mcpgym.client", "mcpgym.client", "WebSocket clients: async, sync twin, generic."),
    "mcp-client": ("mcpgym.mcp_client", "mcpgym.mcp_client", "Spec MCP tool clients."),
    "rubrics": ("mcpgym.rubrics", "mcpgym.rubrics", "Rubrics and reward composition."),
    "providers": ("mcpgym.providers", "mcpgym.providers", "Start environment servers somewhere."),
    "servers": ("mcpgym.servers", "mcpgym.servers", "Hosting: the ASGI app, sessions, settings."),
    "harness": ("mcpgym.harness", "mcpgym.harness", "Evaluation runner, agents, adapters."),
    "capture": ("mcpgym.harness.capture", "mcpgym.harness.capture", "LLM capture proxy."),
    "calendar-gym": ("calendar_gym", "calendar_gym", "The flagship environment."),
}

LAYOUT = {"sdk": "mcpgym", "servers": "mcpgym/servers", "harness": "mcpgym/harness"}


def lay_out_sources() -> Path:
    """build/apidocs/: the packages as installed (symlinks), for mkdocstrings' static reader."""
    tree = ROOT / "build" / "apidocs"
    shutil.rmtree(tree, ignore_errors=True)
    for src, dest in LAYOUT.items():
        target = tree / dest
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(ROOT / src, target, symlinks=False, copy_function=_link, dirs_exist_ok=True)
    shutil.copytree(ROOT / "calendar_gym", tree / "calendar_gym", copy_function=_link)
    for cache in tree.rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)
    return tree


def _link(src: str, dst: str) -> None:
    Path(dst).symlink_to(Path(src).resolve())


def _defined_in(package: str, name: str) -> str:
    """The dotted path of the module that defines `package.name`, plus the name."""
    obj = getattr(importlib.import_module(package), name)
    if inspect.ismodule(obj):
        return obj.__name__
    if inspect.isclass(obj) or inspect.isfunction(obj):
        return f"{obj.__module__}.{name}"
    # constants and type aliases carry no usable __module__: find the module assigning them
    assigned = re.compile(rf"^{re.escape(name)}\s*[:=]", re.M)
    for module_name, module in sorted(sys.modules.items()):
        if not (module_name == package or module_name.startswith(package + ".")):
            continue
        if vars(module).get(name) is not obj:
            continue
        try:
            source = inspect.getsource(module)
        except (OSError, TypeError):
            continue
        if assigned.search(source):
            return f"{module_name}.{name}"
    return f"{package}.{name}"


def render(slug: str) -> str:
    title, package, summary = PACKAGES[slug]
    module = importlib.import_module(package)
    names = sorted(getattr(module, "__all__", []), key=str.lower)
    lines = [
        f"# `{title}`",
        "",
        summary,
        "",
        "<!-- written by scripts/docs_reference.py from the package's __all__; do not edit -->",
        "",
    ]
    for name in names:
        lines += [f"::: {_defined_in(package, name)}", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a page is out of date")
    args = parser.parse_args(argv)
    stale: list[str] = []
    OUT.mkdir(parents=True, exist_ok=True)
    for slug in PACKAGES:
        path = OUT / f"{slug}.md"
        text = render(slug)
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        if args.check:
            stale.append(str(path.relative_to(ROOT)))
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print("out of date (run: python scripts/docs_reference.py):", *stale, sep="\n  ")
        return 1
    if not args.check:
        lay_out_sources()
    return 0


if __name__ == "__main__":
    sys.exit(main())
