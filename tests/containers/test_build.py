"""`mcpgym build` on a real engine: one virtualenv layer, non-root, exec-form CMD, labels."""

from __future__ import annotations

import json
from typing import Any

import pytest

from container_engines import BASE, CALENDAR, GUESS, Engine

pytestmark = pytest.mark.timeout(900)

#: Layers at least this big count as "content" layers (the user/group layer is a few kB).
BIG = 1 << 20


def _content_layers(engine: Engine, image: str) -> list[dict[str, Any]]:
    base_layers = len(engine.client.api.history(BASE))
    layers = engine.client.api.history(image)  # newest first
    return [layer for layer in layers[: len(layers) - base_layers] if layer["Size"] >= BIG]


@pytest.mark.parametrize("target", [GUESS, CALENDAR])
def test_image_has_one_virtualenv_layer_a_user_labels_and_exec_cmd(
    engine: Engine, target: str, request: pytest.FixtureRequest
) -> None:
    image = request.getfixturevalue("calendar_image" if target == CALENDAR else "guess_image")
    content = _content_layers(engine, image)
    assert len(content) == 1, [(c["Size"], c["CreatedBy"][:80]) for c in content]
    assert "COPY" in content[0]["CreatedBy"]
    attrs = engine.client.images.get(image).attrs
    config = attrs["Config"]
    assert config["User"] == "10001:10001"
    cmd = config["Cmd"]
    assert cmd[:3] == ["/opt/venv/bin/mcpgym", "serve", target], cmd  # exec form: a JSON list
    assert cmd[cmd.index("--mode") + 1] == "simulation"
    labels = config["Labels"]
    assert labels["io.mcpgym.target"] == target
    assert labels["io.mcpgym.mode"] == "simulation"
    assert json.loads(labels["io.mcpgym.options"]) == {}
    history = " ".join(h["CreatedBy"] for h in engine.client.api.history(image))
    assert "HEALTHCHECK" in history and "/health" in history
    if engine.name == "docker":  # Podman's compat inspect does not report it
        assert "/health" in " ".join(config["Healthcheck"]["Test"])
