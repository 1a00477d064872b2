"""The validator's fixtures: broken Vault environments (fixtures/vault_fixtures.py) and their
manifests (vault.py), importable by the tests and by the servers the validator starts."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

HERE = Path(__file__).parent
for path in (HERE, HERE / "fixtures"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


@pytest.fixture(scope="session")
def shipped_reports() -> dict[str, tuple[object, object]]:
    """Every shipped environment validated twice at every level (semantic), once per session:
    tests/validate/test_shipped.py compares the two, tests/validate/test_calendar.py reads
    Calendar's gamer panel and collateral pass from the first (one panel run, not two)."""
    from shipped import SHIPPED

    from mcpgym.validate import validate

    def twice(target: str) -> tuple[object, object]:
        return validate(target, level="semantic"), validate(target, level="semantic")

    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(twice, t) for name, t in SHIPPED.items()}
        return {name: f.result() for name, f in futures.items()}
