"""Fixtures for the sandbox's attack tests: sandboxes (guarded, or with named guards off)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from code_gym.sandbox import Limits, Sandbox
from sandbox_helpers import BoxFactory


@pytest.fixture(params=["cold", "warm"])
def make_box(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[BoxFactory]:
    """Build sandboxes under the test's temp dir; every one is closed at the end.

    `weaken=` names guards to switch off (the private hook that proves each guard matters).
    Every test runs twice: with cold sandboxes, and with warm ones (`warm_mounts={}`: a
    `python -c` or `python FILE` run without `ro_mounts` at the sandbox's limits is handed to
    the spare sandbox started ahead), so every attack meets both paths.
    """
    boxes: list[Sandbox] = []
    warm = {} if request.param == "warm" else None

    def make(*, weaken: Iterable[str] = (), **limits: float) -> Sandbox:
        box = Sandbox(
            limits=Limits(**limits), root=tmp_path, warm_mounts=warm, _weaken=frozenset(weaken)
        )
        boxes.append(box)
        return box

    yield make
    for box in boxes:
        box.close()


@pytest.fixture
def box(make_box: BoxFactory) -> Sandbox:
    """A guarded sandbox with short time limits."""
    return make_box(wall_s=10, cpu_s=5)
