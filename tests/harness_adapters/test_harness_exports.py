"""`mcpgym.harness.adapters` exports exactly what `__all__` says, and every name is documented."""

from __future__ import annotations

import doctest
import importlib
import inspect

import pytest

import mcpgym.harness.adapters as adapters

MODULES = [
    "mcpgym.harness.adapters",
    "mcpgym.harness.adapters.base",
    "mcpgym.harness.adapters.events",
    "mcpgym.harness.adapters.home",
    "mcpgym.harness.adapters.episode",
    "mcpgym.harness.hosted.env",
]


def test_all_is_what_the_package_exports() -> None:
    public = {n for n in vars(adapters) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(adapters, n)).__name__ == "module"}
    assert set(adapters.__all__) == public - modules - {"annotations", "Any"}


def test_every_public_class_and_function_has_a_docstring() -> None:
    objects = {n: getattr(adapters, n) for n in adapters.__all__}
    documented = [o for o in objects.values() if inspect.isclass(o) or inspect.isfunction(o)]
    assert len(documented) > 20
    assert [o.__name__ for o in documented if not o.__doc__] == []


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
