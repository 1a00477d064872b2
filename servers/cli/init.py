"""`mcpgym init NAME`: scaffold an environment package that works out of the box.

It writes a pyproject pinning this mcpgym, an `MCPEnvironment` with two tools and a rubric, an
oracle and a null policy, the manifest (`mcpgym.yaml`), passing tests and a README with the
serve / eval / build commands. `mcpgym validate NAME --level semantic` passes on it as written.
The files come from the package data folder `mcpgym/templates/init`.

    mcpgym init demo && cd demo && pip install -e ".[dev]" && pytest && mcpgym validate .
"""

from __future__ import annotations

import argparse
import keyword
import re
import shlex
import sys
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["register", "render", "run", "scaffold"]

_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")


def source_checkout() -> Path | None:
    """The folder of the mcpgym checkout this mcpgym is installed from, or `None` (installed
    from an index). A fresh venv cannot resolve the scaffold's `mcpgym==X` pin from an index
    then: the install command must name the checkout too."""
    import json
    from importlib.metadata import PackageNotFoundError, distribution
    from urllib.parse import unquote, urlparse

    import mcpgym

    try:
        raw = distribution("mcpgym").read_text("direct_url.json")
    except PackageNotFoundError:
        raw = None
    url = json.loads(raw).get("url", "") if raw else ""
    if url.startswith("file://"):
        return Path(unquote(urlparse(url).path))
    here = Path(mcpgym.__file__).resolve().parent.parent  # sdk/.. in a checkout
    pyproject = here / "pyproject.toml"
    if pyproject.is_file() and 'name = "mcpgym"' in pyproject.read_text(encoding="utf-8"):
        return here
    return None


def install_command() -> str:
    """How to install the scaffold in a venv, mcpgym included (see `source_checkout`)."""
    checkout = source_checkout()
    if checkout is None:
        return 'pip install -e ".[dev]"'
    return f'pip install -e {shlex.quote(str(checkout))} -e ".[dev]"'


def render(text: str, name: str) -> str:
    """Fill a template's placeholders for environment `name`."""
    import mcpgym

    package = name.replace("-", "_")
    cls = "".join(part.capitalize() for part in re.split(r"[-_]", name)) + "Env"
    return (
        text.replace("__MCPGYM_VERSION__", mcpgym.__version__)
        .replace("__INSTALL__", install_command())
        .replace("__PACKAGE__", package)
        .replace("__CLASS__", cls)
        .replace("__NAME__", name)
    )


def scaffold(name: str, dest: Path, *, force: bool = False) -> list[Path]:
    """Write the package for `name` into `dest`; returns the files written.

    Raises `ValueError` for a bad name or a non-empty `dest` (unless `force`).
    """
    if not _NAME.match(name) or keyword.iskeyword(name.replace("-", "_")):
        raise ValueError(
            f"{name!r} is not a valid name: use lower case letters, digits, '-' and '_', "
            "starting with a letter (e.g. my-env)"
        )
    if dest.exists() and any(dest.iterdir()) and not force:
        raise ValueError(f"{dest} exists and is not empty (pass --force to write into it)")
    package = name.replace("-", "_")
    root = resources.files("mcpgym").joinpath("templates", "init")
    written = []
    for rel in (
        "pyproject.toml",
        "README.md",
        "mcpgym.yaml",
        "package/__init__.py",
        "package/env.py",
        "package/policies.py",
        "tests/test_env.py",
    ):
        text = root.joinpath(*f"{rel}.tmpl".split("/")).read_text(encoding="utf-8")
        out = dest / rel.replace("package/", f"{package}/")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(render(text, name), encoding="utf-8")
        written.append(out)
    return written


def register(sub: Any) -> None:
    """Add `init` to the `mcpgym` parser's subparsers."""
    p = sub.add_parser(
        "init",
        help="scaffold a new environment package (tools, rubric, manifest, tests)",
        description="Create NAME/ holding an environment package that passes its tests and "
        "`mcpgym validate --level semantic` as written.",
    )
    p.add_argument("name", metavar="NAME", help="environment name, e.g. my-env")
    p.add_argument("--dir", type=Path, help="where to write it (default ./NAME)")
    p.add_argument("--force", action="store_true", help="write into a non-empty folder")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run `mcpgym init`."""
    dest = args.dir or Path(args.name)
    try:
        files = scaffold(args.name, dest, force=args.force)
    except ValueError as exc:
        print(f"mcpgym init: error: {exc}", file=sys.stderr)
        return 2
    print(f"created {dest}/ ({len(files)} files). Next (in an activated venv):")
    print(f"  cd {dest} && {install_command()} && pytest && mcpgym validate . --level semantic")
    if source_checkout() is not None:
        print(
            "  (mcpgym is installed from a checkout, not from an index: the command installs it "
            "from there, so the pin in pyproject.toml resolves in a fresh venv too)"
        )
    return 0
