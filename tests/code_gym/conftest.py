"""Code Gym test fixtures: `env`, a `CodeEnv` on the real sandbox, closed after the test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from code_gym import CodeEnv


@pytest.fixture
def env() -> Iterator[CodeEnv]:
    e = CodeEnv()
    yield e
    e.close()
