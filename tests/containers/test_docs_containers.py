"""The Python example of docs/containers.md runs as written against a real engine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from container_engines import Engine
from mcpgym.providers._engine import listed

pytestmark = pytest.mark.timeout(900)
DOC = Path(__file__).resolve().parents[2] / "docs" / "containers.md"


def test_containers_doc_example_runs(
    engine: Engine,
    guess_image: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (block,) = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    code = block.replace('"guess:1"', repr(guess_image))
    if engine.name == "podman":
        code = code.replace("DockerProvider(", "PodmanProvider(").replace(
            "from mcpgym.providers.docker import DockerProvider",
            "from mcpgym.providers.podman import PodmanProvider",
        )
        monkeypatch.setenv("MCPGYM_PODMAN_HOST", engine.host)
    else:
        monkeypatch.setenv("DOCKER_HOST", engine.host)
    exec(compile(code, str(DOC), "exec"), {"__name__": "docs_containers"})
    out = capsys.readouterr().out
    assert out.count("verdict") == 4
    managed = listed(engine.client, {"label": "io.mcpgym.managed=1"})
    assert not [c for c in managed if (c["Labels"] or {}).get("io.mcpgym.image") == guess_image]
