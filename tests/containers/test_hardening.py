"""Hardening of a running container, from the engine's inspect and from inside the container."""

from __future__ import annotations

import httpx
import pytest

from container_engines import Engine
from mcpgym.mcp_client import MCPToolClient
from mcpgym.providers.docker import Hardening

pytestmark = pytest.mark.timeout(900)


def _sh(container: object, script: str) -> tuple[int, str]:
    code, out = container.exec_run(["sh", "-c", script])  # type: ignore[attr-defined]
    return int(code), bytes(out).decode("utf-8", "replace")


async def test_inspect_and_inside_show_the_hardening(engine: Engine, guess_image: str) -> None:
    async with engine.provider(guess_image) as provider:
        handle = await provider.start()
        container = engine.client.containers.get(handle.id)
        attrs = container.attrs
        host = attrs["HostConfig"]
        assert host["ReadonlyRootfs"] is True
        assert any("no-new-privileges" in opt for opt in host["SecurityOpt"] or [])
        assert attrs["Config"]["User"] not in ("", "0", "root")
        assert host["PidsLimit"] == 256
        assert host["Memory"] == 512 * 1024 * 1024
        assert host["NanoCpus"] == 1_000_000_000
        assert host["Init"] is True
        # Docker says ["ALL"], Podman lists each capability: either way none may be added.
        assert host["CapDrop"] and not host.get("CapAdd")
        bound = attrs["NetworkSettings"]["Ports"]["8000/tcp"]
        assert {b["HostIp"] for b in bound} == {"127.0.0.1"}

        # From inside: every process has empty capability sets, no new privileges, not root.
        code, status = _sh(container, "cat /proc/[0-9]*/status")
        assert code == 0
        caps = [line.split()[1] for line in status.splitlines() if line.startswith("Cap")]
        assert caps and set(caps) == {"0000000000000000"}, status
        nnp = [line.split()[1] for line in status.splitlines() if line.startswith("NoNewPrivs")]
        assert nnp and set(nnp) == {"1"}
        uids = [line.split()[1:] for line in status.splitlines() if line.startswith("Uid:")]
        assert uids and all(u != "0" for row in uids for u in row)
        code, out = _sh(container, "touch /probe")
        assert code != 0 and "Read-only" in out
        code, out = _sh(container, "touch /opt/venv/probe")
        assert code != 0
        code, _ = _sh(container, "touch /tmp/probe && rm /tmp/probe")
        assert code == 0  # the tmpfs is the one writable place
        # The server answers through the 127.0.0.1 publication only.
        async with httpx.AsyncClient(trust_env=False) as http:
            assert (await http.get(handle.base_url + "/health")).json()["status"] == "healthy"


async def test_relaxed_hardening_is_field_by_field(engine: Engine, guess_image: str) -> None:
    relaxed = Hardening(read_only=False, pids_limit=None, mem_limit=None, cpus=None)
    async with engine.provider(guess_image, hardening=relaxed) as provider:
        handle = await provider.start()
        container = engine.client.containers.get(handle.id)
        assert container.attrs["HostConfig"]["ReadonlyRootfs"] is False
        code, _ = _sh(container, "touch /tmp/../probe-root 2>/dev/null; touch /home/probe")
        # Still not root and still no capabilities, so / stays unwritable by permissions.
        assert code != 0
        code, _ = _sh(container, "grep -q '^CapEff:.0000000000000000' /proc/1/status")
        assert code == 0


async def test_production_mode_container_serves_mcp_only(engine: Engine, guess_image: str) -> None:
    async with engine.provider(guess_image, mode="production") as provider:
        handle = await provider.start()
        async with httpx.AsyncClient(trust_env=False) as http:
            assert (await http.post(handle.base_url + "/reset", json={})).status_code == 404
        async with MCPToolClient(handle.base_url, mode="production", timeout=30) as tools:
            names = {t.name for t in await tools.list_tools()}
            assert names == {"guess", "leaderboard"}
            obs = await tools.call_tool("leaderboard", {"top": 2})
            assert obs.error is None and obs.result == []
