"""SwarmProvider's argument checks and spec translation, without an engine (default suite)."""

from __future__ import annotations

import pytest

from mcpgym.pool import make_provider
from mcpgym.providers.docker import Hardening
from mcpgym.providers.swarm import SwarmProvider, _bytes, _size


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"replicas": 0}, "replicas must be >= 1"),
        ({"replicas": 3}, "one replica per service"),
    ],
)
def test_bad_arguments(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SwarmProvider("img", **kwargs)  # pyright: ignore[reportArgumentType]


def test_pool_kind_swarm_needs_an_image_and_builds_a_swarm_provider() -> None:
    with pytest.raises(ValueError, match="needs --image IMAGE"):
        make_provider("swarm", target="x:Y")
    made = make_provider("swarm", image="img:1", replicas=1)
    assert isinstance(made, SwarmProvider) and made.image == "img:1"
    assert SwarmProvider("img", replicas=2, publish_mode="ingress").replicas == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("512m", 512 << 20),
        ("64M", 64 << 20),
        ("1g", 1 << 30),
        ("2k", 2048),
        ("100", 100),
        ("3mb", 3 << 20),
    ],
)
def test_sizes(text: str, expected: int) -> None:
    assert _bytes(text) == expected


def test_service_spec_carries_the_hardening_and_host_mode_port() -> None:
    provider = SwarmProvider("img", hardening=Hardening(cap_add=("NET_BIND_SERVICE",)))
    attrs = {
        "Config": {"User": "root", "Cmd": ["mcpgym", "serve"], "Labels": {"io.mcpgym.port": "9000"}}
    }
    kw = provider._service_kwargs(attrs, "svc", 41000)  # pyright: ignore[reportPrivateUsage]
    assert kw["user"] == "65534:65534" and kw["read_only"] and kw["init"]
    assert kw["cap_drop"] == ["ALL"] and kw["cap_add"] == ["NET_BIND_SERVICE"]
    ports = kw["endpoint_spec"]["Ports"]
    assert ports == [
        {"Protocol": "tcp", "TargetPort": 9000, "PublishedPort": 41000, "PublishMode": "host"}
    ]
    assert (
        kw["labels"]["io.mcpgym.run"] == provider.run_id == kw["container_labels"]["io.mcpgym.run"]
    )
    assert kw["restart_policy"]["Condition"] == "any"
    assert kw["resources"]["Limits"] == {"NanoCPUs": 10**9, "MemoryBytes": 512 << 20}
    assert [m["Target"] for m in kw["mounts"]] == ["/tmp"]
    assert _size("rw,size=64m,mode=1777") == 64 << 20 and _size("rw") is None
    assert "command" not in kw
    served = SwarmProvider("img", mode="production", serve_args=["--x", "1"])
    cmd = served._service_kwargs(attrs, "svc", 1)["command"]  # pyright: ignore[reportPrivateUsage]
    assert cmd == ["mcpgym", "serve", "--mode", "production", "--x", "1"]


def test_a_registry_image_needs_no_local_copy_but_then_takes_no_serve_arguments() -> None:
    from mcpgym.providers import ProviderError

    kw = SwarmProvider("reg/img:1", local_image=False)._service_kwargs({}, "s", 1)  # pyright: ignore[reportPrivateUsage]
    assert kw["endpoint_spec"]["Ports"][0]["TargetPort"] == 8000
    with pytest.raises(ProviderError, match="no CMD"):
        SwarmProvider("reg/img:1", local_image=False, mode="production")._service_kwargs({}, "s", 1)  # pyright: ignore[reportPrivateUsage]
