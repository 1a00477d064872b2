"""Import the server side of the `mcp` package without its client side.

`import mcp.server.lowlevel` first runs `mcp/__init__.py` and `mcp/server/__init__.py`, which import
the whole SDK: the client (`mcp.client`, its `httpx2` transport, its session group), the stdio
helpers and the high-level `MCPServer` (FastMCP), none of which a server that only uses the
low-level `Server` and its Streamable HTTP manager needs (about 5 MB of a production server's
idle RSS). `install()` registers those two packages in `sys.modules` *before* their `__init__`
runs: the submodules mcpgym imports load as usual (Python imports a submodule through its
parent's `__path__`), and the package's own `__init__` runs the first time a name it defines is
looked up (`from mcp import Client`, `mcp.MCPError`), so nothing in the same process can tell the
difference except the memory saved. A process that imported `mcp` before keeps it as it is.

Importing this module calls `install()`: every module of mcpgym.servers that imports `mcp` imports
this one first. tests/servers/test_import_set.py checks that `mcpgym serve --mode production`
runs without the client side.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from types import ModuleType
from typing import Any

__all__ = ["LEAN_PACKAGES", "install", "is_lean"]

# The packages whose `__init__` is deferred, parents first.
LEAN_PACKAGES = ("mcp", "mcp.server")

_lock = threading.RLock()  # two threads looking up a deferred name run the `__init__` once


def _deferred_package(name: str) -> ModuleType | None:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return None  # not an installed package: leave the import system to say so
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader
    pending = [True]

    def __getattr__(attr: str) -> Any:  # the module-level hook of PEP 562
        with _lock:
            if pending:
                pending.clear()  # first: a lookup from inside `__init__` must not recurse
                loader.exec_module(module)
        try:
            return module.__dict__[attr]
        except KeyError:
            raise AttributeError(f"module {name!r} has no attribute {attr!r}") from None

    module.__dict__["__getattr__"] = __getattr__
    module.__dict__["_mcpgym_lean"] = pending  # non-empty while the `__init__` has not run
    return module


def install() -> None:
    """Register `LEAN_PACKAGES` with their `__init__` deferred (idempotent; a no-op for a package
    that is already imported)."""
    with _lock:
        for name in LEAN_PACKAGES:
            if name in sys.modules:
                continue
            module = _deferred_package(name)
            if module is None:
                return
            sys.modules[name] = module
            parent, _, child = name.rpartition(".")
            if parent:
                setattr(sys.modules[parent], child, module)


def is_lean(name: str) -> bool:
    """Whether package `name` is imported with its `__init__` still deferred."""
    module = sys.modules.get(name)
    return module is not None and bool(module.__dict__.get("_mcpgym_lean"))


install()
