"""Real engines for the container tests: Docker (marker `docker`) and Podman (marker `podman`).

Each engine is started by the repo's own scripts (`.ci/docker-engine.sh`, `.ci/podman-engine.sh`,
which install it when missing), gets the registry-free base image (`.ci/base-image.sh`, cached),
and builds the example and Calendar Gym images once per session. Every test that takes `engine`
runs on both engines (parametrised, never skipped); `-m docker` / `-m podman` picks one.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpgym.providers._engine import connect, listed
from mcpgym.providers.docker import DockerProvider
from mcpgym.providers.image import BuildSpec, build_image
from mcpgym.providers.podman import PodmanProvider

ROOT = Path(__file__).resolve().parents[2]
BASE = "mcpgym-base:bookworm"
GUESS = "mcpgym.examples.guess:GuessEnv"
CALENDAR = "calendar_gym:CalendarEnv"
#: Podman reaches a plain-HTTP registry only where registries.conf says so; the engine script
#: marks this address insecure, so the test registry listens here.
REGISTRY_PORT = int(os.environ.get("MCPGYM_REGISTRY_PORT", "5055"))


def _script(name: str, **env: str) -> str:
    proc = subprocess.run(
        ["bash", str(ROOT / ".ci" / name)],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, **env},
        check=False,
    )
    assert proc.returncode == 0, f"{name} failed:\n{proc.stderr[-3000:]}"
    return proc.stdout.strip().splitlines()[-1]


@dataclass
class Engine:
    """One running engine: its name, socket URL, an SDK client and the images built on it."""

    name: str
    host: str
    client: Any
    images: dict[str, str] = field(default_factory=dict)

    def provider(self, image: str, **kwargs: Any) -> DockerProvider:
        cls = PodmanProvider if self.name == "podman" else DockerProvider
        return cls(image, engine=self.host, **kwargs)

    def image(self, target: str, **spec: Any) -> str:
        """Build `target` on the base image once per session; returns its tag."""
        if target not in self.images:
            tag = "mcpgym-test-" + target.partition(":")[0].replace("_", "-").replace(".", "-")
            self.images[target] = build_image(
                BuildSpec(target=target, tag=f"{tag}:latest", base=BASE, **spec), engine=self.host
            )
        return self.images[target]

    def managed(self, run_id: str) -> list[Any]:
        return listed(self.client, {"label": f"io.mcpgym.run={run_id}"})


def _start(name: str) -> Engine:
    script = "podman-engine.sh" if name == "podman" else "docker-engine.sh"
    host = _script(script).removeprefix("export DOCKER_HOST=")
    _script("base-image.sh", DOCKER_HOST=host)
    return Engine(name=name, host=host, client=connect(host))


_ENGINES: dict[str, Engine] = {}


@pytest.fixture(
    scope="session",
    params=[
        pytest.param("docker", marks=pytest.mark.docker),
        pytest.param("podman", marks=pytest.mark.podman),
    ],
)
def engine(request: pytest.FixtureRequest) -> Engine:
    """A running engine with the base image (started once per session and engine)."""
    name = str(request.param)
    if name not in _ENGINES:
        _ENGINES[name] = _start(name)
    return _ENGINES[name]


@pytest.fixture(scope="session")
def guess_image(engine: Engine) -> str:
    return engine.image(GUESS)


@pytest.fixture(scope="session")
def calendar_image(engine: Engine) -> str:
    return engine.image(CALENDAR, extras=("calendar",))


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


@pytest.fixture(scope="session")
def registry() -> Iterator[str]:
    """A real OCI registry (Debian's docker-registry, distribution 2.8) on 127.0.0.1."""
    binary = shutil.which("docker-registry")
    assert binary, "docker-registry missing: apt-get install -y docker-registry (just test-docker)"
    assert _port_free(REGISTRY_PORT), (
        f"127.0.0.1:{REGISTRY_PORT} is taken; set MCPGYM_REGISTRY_PORT"
    )
    folder = Path(tempfile.mkdtemp(prefix="mcpgym-registry-"))
    config = folder / "config.yml"
    config.write_text(
        "version: 0.1\n"
        f"storage:\n  filesystem:\n    rootdirectory: {folder / 'data'}\n"
        "  delete:\n    enabled: true\n"
        f"http:\n  addr: 127.0.0.1:{REGISTRY_PORT}\n",
        "utf-8",
    )
    log = (folder / "registry.log").open("wb")
    proc = subprocess.Popen([binary, "serve", str(config)], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{REGISTRY_PORT}/v2/"
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert proc.poll() is None, (folder / "registry.log").read_text()
        assert time.monotonic() < deadline, "registry did not answer in 30 s"
        time.sleep(0.05)
    try:
        yield f"127.0.0.1:{REGISTRY_PORT}"
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()
        shutil.rmtree(folder, ignore_errors=True)
