"""`__all__` is what each package really exports: every listed name resolves, and nothing
public is left out of it."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

import pytest

PACKAGES = [
    "mcpgym",
    "mcpgym.servers",
    "mcpgym.harness",
    "mcpgym.harness.capture",
    "mcpgym.client",
    "calendar_gym",
    "mcpgym.tasks",
]
TYPING_HELPERS = {"TYPE_CHECKING", "Any", "annotations"}


@pytest.mark.parametrize("name", PACKAGES)
def test_every_listed_name_resolves(name: str) -> None:
    package = importlib.import_module(name)
    missing = [n for n in package.__all__ if not hasattr(package, n)]
    assert missing == []
    assert len(set(package.__all__)) == len(package.__all__), "duplicates in __all__"


@pytest.mark.parametrize("name", PACKAGES)
def test_nothing_public_is_unlisted(name: str) -> None:
    package = importlib.import_module(name)
    public = {
        n
        for n, v in vars(package).items()
        if not n.startswith("_") and not inspect.ismodule(v) and n not in TYPING_HELPERS
    }
    assert public - set(package.__all__) == set()


def test_importing_mcpgym_does_not_import_mcp() -> None:
    """The MCP package is heavy (over a second): the SDK and a simulation server load it lazily."""
    code = "import sys, mcpgym, mcpgym.servers.app; print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
