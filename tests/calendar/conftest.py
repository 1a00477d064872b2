"""Fixtures for Calendar Gym tests: environments and `Caller`s (see `helpers.cal`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from calendar_gym import CalendarEnv
from helpers.cal import Caller, make


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
