"""Fixtures of the verifiers suite: verifiers 0.4.0 with openenv-core 0.3.0 in their own virtual
environment (built from PyPI once, kept in build/), and `mcpgym serve` on 127.0.0.1."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.npm import serve
from helpers.pinned_venv import pinned_venv

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("MCPGYM_VERIFIERS_VENV", ROOT / "build" / "verifiers-venv"))
PINS = {"verifiers": "0.4.0", "openenv-core": "0.3.0", "uv": "0.13.8"}


@pytest.fixture(scope="session")
def verifiers_python() -> Path:
    """A virtual environment holding verifiers 0.4.0, openenv-core 0.3.0 and uv (pins checked)."""
    return pinned_venv(VENV, PINS)


@pytest.fixture(scope="module")
def guess_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`mcpgym serve mcpgym.examples.guess:GuessEnv` on a free 127.0.0.1 port; its base URL."""
    yield from _serve(tmp_path_factory)


@pytest.fixture(scope="module")
def guess_production(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The same, in production mode (spec `/mcp` only, no task routes); its base URL."""
    yield from _serve(tmp_path_factory, "--mode", "production")


GUARD_TOKEN = "operator-token-for-the-verifiers-suite"


@pytest.fixture(scope="module")
def guess_guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """Guess the Number in simulation mode behind an operator token: (base URL, token)."""
    for url in _serve(tmp_path_factory, "--token", GUARD_TOKEN):
        yield url, GUARD_TOKEN


@pytest.fixture(scope="module")
def calendar_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`mcpgym serve calendar_gym:CalendarEnv` (simulation); its base URL."""
    yield from _serve(tmp_path_factory, target="calendar_gym:CalendarEnv")


def _serve(
    tmp: pytest.TempPathFactory, *extra: str, target: str = "mcpgym.examples.guess:GuessEnv"
) -> Iterator[str]:
    with serve(target, tmp.mktemp("serve"), *extra) as served:  # its log in a file, not a pipe
        yield served.url
