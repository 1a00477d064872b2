"""Discovery: installed environments by name, started in process or as a local server."""

from __future__ import annotations

import httpx
import pytest

import mcpgym
from mcpgym.discovery import afrom_env, environment_entry, list_environments


def test_installed_environments_have_valid_manifests() -> None:
    found = {e.name: e for e in list_environments()}
    assert {"guess", "calendar"} <= set(found)
    assert found["calendar"].manifest is not None
    assert found["calendar"].manifest.entry_point == "calendar_gym:CalendarEnv"
    assert environment_entry("nope") is None
    with pytest.raises(ValueError, match="installed"):
        mcpgym.from_env("nope")


def test_from_env_in_process() -> None:
    env = mcpgym.from_env("guess", in_process=True)
    assert type(env).__name__ == "GuessEnv"


@pytest.mark.timeout(180)
def test_from_env_serves_and_stops() -> None:
    client = mcpgym.from_env("guess")
    url = client._core.base_url
    with client as env:
        env.reset(seed=3)
        assert env.call_tool("guess", n=50).result["verdict"] in ("higher", "lower", "correct")
    with pytest.raises(httpx.TransportError):  # closing the client stopped the server
        httpx.get(url + "/health", timeout=2)


@pytest.mark.timeout(180)
async def test_afrom_env_serves_and_stops() -> None:
    client = await afrom_env("guess")
    url = client._core.base_url
    async with client:
        first = await client.reset(seed=1)
        assert "prompt" in first.observation.metadata
    async with httpx.AsyncClient() as http:
        with pytest.raises(httpx.TransportError):
            await http.get(url + "/health", timeout=2)
