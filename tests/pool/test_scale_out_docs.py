"""The Python example of docs/scale-out.md runs as written (a real pool of processes)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs" / "scale-out.md"

pytestmark = pytest.mark.server


def test_pool_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    (block,) = re.findall(r"```python\n(.*?)```", DOCS.read_text(), flags=re.S)
    exec(compile(block, "docs/scale-out.md", "exec"), {"__name__": "docs_scale_out"})
    out = capsys.readouterr().out
    assert "'served': 1" in out and "'slot': 1" in out


def test_every_kind_named_in_the_docs_is_a_known_provider_kind() -> None:
    from mcpgym.pool import PROVIDER_KINDS

    text = DOCS.read_text()
    for kind in re.findall(r"--pool (\w+):\d", text):
        assert kind in PROVIDER_KINDS, kind
