"""mcpgym's simulation clients pointed at a server that does not play `/ws` episodes: a native ORS
server (ors-sdk's own `ors.Server`), a production mcpgym server, a web app of another kind. Each
refuses the WebSocket upgrade with 403/404; the client must say it is a protocol or mode
mismatch, in one line with the fix, not "UNAUTHORIZED" (issue 28). A server that does play
episodes and refuses a missing token still says UNAUTHORIZED.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from helpers.compat import ORS_SERVER, compat
from helpers.server import run_server
from mcpgym import EnvClient, SyncEnvClient
from mcpgym.client.generic import GenericEnvClient, SyncGenericEnvClient
from mcpgym.errors import RemoteError
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app

ors = pytest.importorskip("ors", reason="just test-ors installs ors-sdk")
pytestmark = [pytest.mark.ors, pytest.mark.server]

from ors_shop import ORSShop  # noqa: E402

SYNC = [SyncEnvClient, SyncGenericEnvClient]
ASYNC = [EnvClient, GenericEnvClient]


def _refusals(url: str) -> list[RemoteError]:
    """What each client (sync and async, typed and generic) raises at its first reset."""
    errors: list[RemoteError] = []
    for sync in SYNC:
        with pytest.raises(RemoteError) as caught, sync(url) as env:
            env.reset()
        errors.append(caught.value)

    async def play(cls: Callable[[str], Any]) -> None:
        async with cls(url) as env:
            await env.reset()

    for cls in ASYNC:
        with pytest.raises(RemoteError) as caught:
            asyncio.run(play(cls))
        errors.append(caught.value)
    return errors


def _one_line_with_a_fix(error: RemoteError, code: str, *words: str) -> None:
    assert error.remote_code == code, error
    assert "\n" not in error.message and "; fix: " in error.message, error.message
    assert "UNAUTHORIZED" not in str(error), error
    for word in words:
        assert word in error.message, (word, error.message)


@compat(
    ORS_SERVER,
    "mcpgym SyncEnvClient / EnvClient (typed and generic)",
    "refused",
    "pointed at ors.Server, the first reset is a one-line PROTOCOL_MISMATCH naming its ORS "
    "environments and the fix (ORS's own client, or mcpgym serve --ors), never UNAUTHORIZED",
)
def test_a_native_ors_server_is_a_protocol_mismatch() -> None:
    with run_server(ors.Server([ORSShop]).app) as native:
        errors = _refusals(native.url)
    for error in errors:
        _one_line_with_a_fix(
            error, "PROTOCOL_MISMATCH", "is an ORS server", "orsshop", "ors.client.ORS", "--ors"
        )
        assert error.detail["server_protocol"] == "ors"


def test_a_server_of_another_kind_is_a_protocol_mismatch() -> None:
    async def health(_: Any) -> JSONResponse:
        return JSONResponse({"ok": True})

    with run_server(Starlette(routes=[Route("/health", health)])) as other:
        errors = _refusals(other.url)
    for error in errors:
        _one_line_with_a_fix(error, "PROTOCOL_MISMATCH", "no OpenEnv WebSocket endpoint")


def test_a_production_server_is_a_mode_mismatch() -> None:
    with run_server(create_app(GuessEnv, mode="production")) as served:
        errors = _refusals(served.url)
    for error in errors:
        _one_line_with_a_fix(error, "MODE_MISMATCH", "serves production mode", served.url)
        assert "ws://" not in error.message


def test_a_guarded_simulation_server_without_the_token_is_unauthorized() -> None:
    """The class's other side: a server that does play episodes, refusing a missing token."""
    with run_server(create_app(GuessEnv, token="the-operator-token")) as served:
        errors = _refusals(served.url)
        with SyncEnvClient(
            served.url, headers={"Authorization": "Bearer the-operator-token"}
        ) as ok:
            assert ok.reset(seed=1).done is False
    for error in errors:
        assert error.remote_code == "UNAUTHORIZED", error
