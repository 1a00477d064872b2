"""Fixtures for the capture proxy tests: a scripted model, and the proxy in-process (ASGI) and on
a real socket."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from mcpgym.harness.capture import CaptureProxy
from scripted_model import ScriptedModel, call, say
from scripted_model.server import MODELS, scripted_proxy


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel([call("guess", {"n": 50}), say("The number is 50.")])


@pytest.fixture
def local_proxy(model: ScriptedModel) -> CaptureProxy:
    """A proxy that is never started: serve its `.app` in-process."""
    return CaptureProxy(backend=model, models=MODELS)


@pytest.fixture
async def asgi(local_proxy: CaptureProxy) -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client talking to the proxy app in-process."""
    transport = httpx.ASGITransport(app=local_proxy.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as client:
        yield client


@pytest.fixture
async def proxy(model: ScriptedModel) -> AsyncIterator[CaptureProxy]:
    """The scripted model behind a proxy on a real 127.0.0.1 socket."""
    async with scripted_proxy(model) as running:
        yield running
