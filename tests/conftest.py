"""Fixtures shared by the sdk and server tests."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from helpers.apps import ClientFactory
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app


@pytest.fixture
def make_client() -> Iterator[ClientFactory]:
    """Build an in-process app and a started `TestClient` for it (lifespan run, so the probe,
    the reaper and the session manager are live). Server exceptions surface as responses, so a
    test sees a 500 instead of a re-raised exception."""
    with contextlib.ExitStack() as stack:

        def make(env: Any = GuessEnv, **settings: Any) -> TestClient:
            app = create_app(env, **settings)
            return stack.enter_context(TestClient(app, raise_server_exceptions=False))

        yield make


@pytest.fixture
def guess_client(make_client: ClientFactory) -> TestClient:
    """GuessEnv served in simulation mode with default settings."""
    return make_client(GuessEnv)
