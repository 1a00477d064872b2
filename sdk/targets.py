"""What a user names on the command line, imported by one rule for every command.

`serve`, `validate`, `eval`, `build` and `from_env` all take `MODULE:ATTR` (or the name of an
installed environment, see `mcpgym list`) and import it the same way:

- the current folder comes first on the import path, as for `python -m` (and a manifest's own
  folder, when there is one);
- a module that cannot be found is named with where it was looked for;
- a module that exists but fails to import shows *its* error, with the file and line it came
  from (a missing dependency, a syntax error, a tool with a reserved name ...), never "cannot
  import" alone.

Every failure is a `TargetError` (a `ValueError`) whose message is one line ending in a fix.

Example:
    >>> import_target("mcpgym.examples.guess:GuessEnv").__name__
    'GuessEnv'
    >>> import_target("no_such_module_here:Env")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    mcpgym.targets.TargetError: no module named 'no_such_module_here' ...
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from pathlib import Path
from typing import Any

from mcpgym.errors import EnvironmentDefinitionError

__all__ = [
    "TargetError",
    "describe_exception",
    "import_target",
    "on_import_path",
    "split_target",
]


_OWN = Path(__file__).resolve().parent  # mcpgym's own code


class TargetError(ValueError):
    """A target that cannot be imported; the message says why and how to fix it."""


def split_target(spec: str) -> tuple[str, str]:
    """`MODULE:ATTR` as `(module, attr)`; `TargetError` for anything else."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise TargetError(
            f"expected MODULE:ATTR (e.g. mcpgym.examples.guess:GuessEnv) or an installed "
            f"environment's name, got {spec!r}; fix: name the class as file_without_py:ClassName"
        )
    return module_name, attr


def _where(exc: BaseException) -> str:
    """`file.py:LINE` of the innermost frame outside Python's import machinery."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{_short(exc.filename)}:{exc.lineno}"
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith("<frozen") and "importlib" not in f.filename
    ]
    # an error mcpgym raises about the user's code (a reserved tool name) points at their line
    theirs = [f for f in frames if not Path(f.filename).resolve().is_relative_to(_OWN)]
    if not (theirs or frames):
        return ""
    last = (theirs or frames)[-1]
    return f"{_short(last.filename)}:{last.lineno}"


def _short(path: str) -> str:
    """A path relative to the current folder when it lies inside it."""
    try:
        return os.path.relpath(path) if Path(path).resolve().is_relative_to(Path.cwd()) else path
    except (OSError, ValueError):
        return path


def describe_exception(exc: BaseException) -> str:
    """`KeyError: 'cfg' (raising_mod.py:1)`: an exception as one line naming where it arose."""
    text = str(exc.msg if isinstance(exc, SyntaxError) else exc).strip().splitlines()
    first = text[0] if text else ""
    where = _where(exc)
    return f"{type(exc).__name__}: {first}" + (f" ({where})" if where else "")


def _missing_itself(exc: ModuleNotFoundError, module_name: str) -> bool:
    """Whether the module named (or one of its parent packages) is what was not found."""
    missing = exc.name or ""
    return module_name == missing or module_name.startswith(missing + ".")


def on_import_path(root: str | None = None) -> str:
    """Put `root` (else the current folder) first on the import path, once; returns it.

    The one rule every command follows (`serve`, `validate`, `build`, `eval`): a console script's
    `sys.path` starts with its own bin folder, not the folder it runs in.
    """
    folder = str(Path(root).resolve()) if root else str(Path.cwd())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return folder


def import_target(spec: str, root: str | None = None) -> Any:
    """Import `MODULE:ATTR`: `root` (else the current folder) first on the import path.

    Raises `TargetError` (see the module docstring for the rule and the messages).
    """
    module_name, attr = split_target(spec)
    folder = on_import_path(root)
    try:
        obj: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if _missing_itself(exc, module_name):
            raise TargetError(
                f"cannot import module {module_name!r}: no module named {exc.name!r} in {folder} "
                "or the installed packages; fix: run "
                f"from the folder holding {module_name.split('.')[0]}.py (or its package), or "
                "pip install -e your package"
            ) from None
        raise TargetError(
            f"cannot import module {module_name!r}: {describe_exception(exc)}; fix: pip install "
            f"{exc.name.split('.')[0] if exc.name else 'the missing package'} (or correct the "
            "import)"
        ) from None
    except EnvironmentDefinitionError as exc:  # its message names the fix
        where = _where(exc)
        raise TargetError(f"{where + ': ' if where else ''}{exc}") from None
    except Exception as exc:
        raise TargetError(
            f"cannot import module {module_name!r}: {describe_exception(exc)}; fix: correct that "
            f"line (`python -c 'import {module_name}'` shows the whole traceback)"
        ) from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            names = sorted(n for n in vars(obj) if not n.startswith("_") and n[:1].isupper())
            hint = f" (it has {', '.join(names[:8])})" if names else ""
            raise TargetError(
                f"module {module_name!r} has no attribute {attr!r}{hint}; fix: name the "
                "environment class after the colon"
            )
        obj = getattr(obj, part)
    return obj
