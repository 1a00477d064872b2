"""Fixtures for Calendar Gym tests: environments and `Caller`s (see `cal_helpers`)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# This folder is also called calendar_gym; with tests/ on sys.path (tests/conftest.py puts it
# there) Python would import it as a namespace package instead of the real one. Put the
# repository first so the real package wins, whatever the installed state.
_spec = importlib.util.find_spec("calendar_gym")
if _spec is None or _spec.origin is None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cal_helpers import Caller, make  # noqa: E402

from calendar_gym import CalendarEnv  # noqa: E402


@pytest.fixture
def env() -> Iterator[CalendarEnv]:
    """Alice's session in the default world."""
    e, _ = make()
    yield e
    e.close()


@pytest.fixture
def call(env: CalendarEnv) -> Caller:
    """A `Caller` for the `env` fixture."""
    return Caller(env)


@pytest.fixture
def session() -> Iterator[Any]:
    """A factory of (env, caller) pairs with reset options; closes them afterwards."""
    made: list[CalendarEnv] = []

    def factory(**options: Any) -> tuple[CalendarEnv, Caller]:
        e, c = make(**options)
        made.append(e)
        return e, c

    yield factory
    for e in made:
        e.close()
