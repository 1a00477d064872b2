"""Kubernetes: manifests checked against the official client's models; the provider's calls
against a local fake of the API (tests/pool/k8s_fake.py). No real cluster runs here.

Marked `kubernetes` (`just test-kubernetes` installs the client).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

pytestmark = [pytest.mark.kubernetes, pytest.mark.server]

k8s = pytest.importorskip("kubernetes.client")
yaml = pytest.importorskip("yaml")

from k8s_fake import FakeCluster, validate  # noqa: E402

from helpers.server import run_server  # noqa: E402
from helpers.wait import await_until  # noqa: E402
from mcpgym.client import EnvClient  # noqa: E402
from mcpgym.pool import EnvPool  # noqa: E402
from mcpgym.providers import LABEL_RUN, ProviderError  # noqa: E402
from mcpgym.providers.k8s_manifests import (  # noqa: E402
    LABEL_SERVER,
    ServerSpec,
    deployment,
    pod,
    service,
    to_dicts,
)
from mcpgym.providers.kubernetes import KubernetesProvider  # noqa: E402

IMAGE = "mcpgym-guess:test"
_LABEL_KEY = re.compile(
    r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
_LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")


# -- manifests -------------------------------------------------------------------------------


def _roundtrip(obj: Any, model: str) -> dict[str, Any]:
    """The object through the client's deserializer and back: unknown or misspelt fields
    would be dropped, required ones missing would raise."""
    (data,) = to_dicts([obj])
    again = validate(data, model)
    assert to_dicts([again]) == [data]
    return data


def _assert_hardened(pod_spec: dict[str, Any], user: int = 10001) -> None:
    assert pod_spec["automountServiceAccountToken"] is False
    psc = pod_spec["securityContext"]
    assert psc["runAsNonRoot"] is True and psc["runAsUser"] == user
    assert psc["seccompProfile"] == {"type": "RuntimeDefault"}
    (c,) = pod_spec["containers"]
    sc = c["securityContext"]
    assert sc["allowPrivilegeEscalation"] is False and sc["privileged"] is False
    assert sc["readOnlyRootFilesystem"] is True and sc["capabilities"] == {"drop": ["ALL"]}
    assert set(c["resources"]["limits"]) == {"cpu", "memory"}
    assert c["readinessProbe"]["httpGet"]["path"] == "/health"
    assert c["livenessProbe"]["httpGet"]["path"] == "/health"
    (tmp,) = pod_spec["volumes"]
    assert tmp["emptyDir"]["medium"] == "Memory"
    assert c["volumeMounts"] == [{"mountPath": "/tmp", "name": "tmp"}]


def test_manifests_fit_the_clients_models_and_are_hardened() -> None:
    spec = ServerSpec(image=IMAGE, name="cal", namespace="rl", labels={LABEL_RUN: "abc123"},
                      env={"A": "1"}, args=["serve", "x:Y"])  # fmt: skip
    d = _roundtrip(deployment(spec, replicas=3), "V1Deployment")
    assert d["spec"]["replicas"] == 3 and d["metadata"]["namespace"] == "rl"
    assert (
        d["spec"]["selector"]["matchLabels"].items()
        <= d["spec"]["template"]["metadata"]["labels"].items()
    )
    _assert_hardened(d["spec"]["template"]["spec"])
    assert d["spec"]["template"]["spec"]["containers"][0]["args"] == ["serve", "x:Y"]
    s = _roundtrip(service(spec, "NodePort"), "V1Service")
    assert s["spec"]["selector"] == d["spec"]["selector"]["matchLabels"]
    assert s["spec"]["ports"][0]["port"] == 8000 and s["spec"]["type"] == "NodePort"
    p = _roundtrip(pod(spec, "cal-1"), "V1Pod")
    assert p["metadata"]["labels"][LABEL_SERVER] == "cal-1"
    assert p["spec"]["restartPolicy"] == "Never"
    _assert_hardened(p["spec"])
    for obj in (d, s, p):
        for key, value in obj["metadata"]["labels"].items():
            assert _LABEL_KEY.match(key) and _LABEL_VALUE.match(value), (key, value)


def test_provider_labels_are_valid_kubernetes_labels() -> None:
    provider = KubernetesProvider(IMAGE)
    labels = to_dicts([provider.pod_manifest("mcpgym-x-1")])[0]["metadata"]["labels"]
    assert labels[LABEL_RUN] == provider.run_id
    for key, value in labels.items():
        assert _LABEL_KEY.match(key) and _LABEL_VALUE.match(value), (key, value)


def test_k8s_manifest_command_prints_valid_yaml() -> None:
    cmd = [sys.executable, "-m", "mcpgym.servers", "k8s", "manifest", IMAGE, "--replicas", "4",
           "--name", "calendar", "--arg", "serve", "--arg", "calendar_gym:CalendarEnv"]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=60).stdout
    dep, svc = yaml.safe_load_all(out)
    assert to_dicts([validate(dep, "V1Deployment")]) == [dep]
    assert to_dicts([validate(svc, "V1Service")]) == [svc]
    assert dep["spec"]["replicas"] == 4 and svc["metadata"]["name"] == "calendar"
    assert dep["spec"]["template"]["spec"]["containers"][0]["args"] == [
        "serve", "calendar_gym:CalendarEnv"
    ]  # fmt: skip
    _assert_hardened(dep["spec"]["template"]["spec"])


@pytest.mark.parametrize("bad", [["--replicas", "-1"], ["--port", "0"], ["--port", "70000"]])
def test_k8s_manifest_rejects_bad_numbers(bad: list[str]) -> None:
    cmd = [sys.executable, "-m", "mcpgym.servers", "k8s", "manifest", IMAGE, *bad]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "error" in done.stderr and done.stdout == ""


# -- the provider against the fake API -------------------------------------------------------


@pytest.fixture
def cluster() -> Iterator[tuple[FakeCluster, Any]]:
    fake = FakeCluster({IMAGE: "mcpgym.examples.guess:GuessEnv"})
    with run_server(fake.app()) as server:
        conf = k8s.Configuration(host=server.url)
        api = k8s.ApiClient(conf)
        yield fake, api
        api.close()


def _provider(api: Any, image: str = IMAGE, **options: Any) -> KubernetesProvider:
    return KubernetesProvider(image, namespace="rl", api_client=api, poll_interval_s=0.1, **options)


async def test_pods_become_ready_through_their_probe_and_serve(
    cluster: tuple[FakeCluster, Any],
) -> None:
    fake, api = cluster
    provider = _provider(api)
    async with provider:
        handles = await asyncio.gather(provider.start(), provider.start())
        assert len({h.base_url for h in handles}) == 2
        for h in handles:
            assert h.base_url == f"http://{h.meta['pod_ip']}:8000"
            async with EnvClient(h.base_url) as env:
                await env.reset(seed=3)
                assert (await env.call_tool("guess", n=50)).error is None
            assert await provider.alive(h) is True
        assert sorted(await provider.run_pods()) == sorted(h.id for h in handles)
        for body in fake.created:  # what reached the API is the hardened pod
            assert body["metadata"]["namespace"] == "rl"
            assert body["metadata"]["labels"][LABEL_RUN] == provider.run_id
            _assert_hardened(body["spec"])
        await provider.stop(handles[0])
        assert await provider.run_pods() == [handles[1].id]
        assert await provider.alive(handles[0]) is False
    assert await provider.run_pods() == []
    assert "delete" in fake.calls and "list" in fake.calls


async def test_an_image_that_cannot_be_pulled_fails_the_start_and_is_removed(
    cluster: tuple[FakeCluster, Any],
) -> None:
    _, api = cluster
    provider = _provider(api, image="nowhere/none:1")
    with pytest.raises(ProviderError, match="ErrImagePull"):
        await provider.start()
    assert await provider.run_pods() == []


async def test_an_unreachable_api_is_a_provider_error() -> None:
    conf = k8s.Configuration(host="http://127.0.0.1:9")
    conf.retries = 0
    api = k8s.ApiClient(conf)
    provider = _provider(api)
    with pytest.raises(ProviderError, match=r"Kubernetes API|cannot reach"):
        await provider.start()
    api.close()


async def test_a_pool_of_pods_replaces_a_dead_one(cluster: tuple[FakeCluster, Any]) -> None:
    fake, api = cluster
    provider = _provider(api)
    async with EnvPool(provider, size=2, health_interval_s=0.2) as pool:
        victim = pool.members[0]
        proc = fake.pods[("rl", victim.handle.id)].proc
        assert proc is not None
        os.kill(proc.pid, signal.SIGKILL)  # the pod's server dies: phase Failed

        async def retired() -> bool:
            return victim in pool.retired

        await await_until(retired, within=30, what="the failed pod is retired")
        await pool.wait_full(60)
        assert ("rl", victim.handle.id) not in fake.pods  # deleted, verified by listing
        for _ in range(3):
            async with pool.session() as env:
                await env.reset(seed=1)
        assert victim.served == 0 and pool.stats()["replacements"] == 1
    assert await provider.run_pods() == []
