"""Types for the in-process app fixtures of tests/conftest.py."""

from collections.abc import Callable

from starlette.testclient import TestClient

ClientFactory = Callable[..., TestClient]
"""`make_client(env=GuessEnv, **settings)`: a started TestClient for `create_app(env, ...)`."""
