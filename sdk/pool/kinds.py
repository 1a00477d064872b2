"""Provider kinds by name, for `mcpgym eval --pool KIND:N` and other command lines.

Process and Ray servers run an environment `MODULE:ATTR` (`target`); container engines
(`docker`, `podman`, `swarm`, `kubernetes`) run an image (`image`, e.g. from `mcpgym build`).
Packages add kinds through the `mcpgym.providers` entry-point group: a callable taking
`(target=..., image=..., **options)` and returning a `Provider`.

Example:
    >>> parse_pool_spec("process:4")
    ('process', 4)
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any

from mcpgym.providers.base import Provider

__all__ = ["PROVIDER_KINDS", "make_provider", "parse_pool_spec"]

PROVIDER_KINDS: dict[str, tuple[str, str]] = {
    "process": ("mcpgym.providers.process:ProcessProvider", "target"),
    "ray": ("mcpgym.providers.ray:RayProvider", "target"),
    "docker": ("mcpgym.providers.docker:DockerProvider", "image"),
    "podman": ("mcpgym.providers.podman:PodmanProvider", "image"),
    "swarm": ("mcpgym.providers.swarm:SwarmProvider", "image"),
    "kubernetes": ("mcpgym.providers.kubernetes:KubernetesProvider", "image"),
}
"""Built-in kinds: the provider class and what it runs (an env `target` or an `image`)."""


def parse_pool_spec(spec: str) -> tuple[str, int]:
    """`"KIND:N"` → `(kind, n)`; raises `ValueError` with the accepted form otherwise."""
    kind, sep, count = spec.partition(":")
    if not sep or not kind or not count.isdigit() or int(count) < 1:
        raise ValueError(f"--pool expects KIND:N with N >= 1 (e.g. process:4), got {spec!r}")
    return kind.strip().lower(), int(count)


def make_provider(
    kind: str, *, target: str | None = None, image: str | None = None, **options: Any
) -> Provider:
    """A provider of `kind` running `target` (an env `MODULE:ATTR`) or `image`.

    Raises `ValueError` for an unknown kind, a missing target/image, or a kind whose optional
    dependency is not installed (the message names the extra to install).
    """
    plugins = {ep.name: ep for ep in entry_points(group="mcpgym.providers")}
    if kind in plugins:
        made = plugins[kind].load()(target=target, image=image, **options)
        if not isinstance(made, Provider):
            raise ValueError(f"provider kind {kind!r} returned {type(made).__name__}")
        return made
    if kind not in PROVIDER_KINDS:
        known = ", ".join(sorted({*PROVIDER_KINDS, *plugins}))
        raise ValueError(f"unknown provider kind {kind!r} (known: {known})")
    path, needs = PROVIDER_KINDS[kind]
    what = target if needs == "target" else image
    if not what:
        flag = "--env MODULE:ATTR" if needs == "target" else "--image IMAGE"
        raise ValueError(f"a {kind} pool needs {flag}")
    module, _, attr = path.partition(":")
    try:
        cls = getattr(importlib.import_module(module), attr)
    except ImportError as exc:
        raise ValueError(
            f"the {kind} provider is not available ({exc}); install mcpgym[{kind}]"
        ) from exc
    return cls(what, **options)
