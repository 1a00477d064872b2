"""The validator's fixtures: broken Vault environments (fixtures/vault_fixtures.py) and their
manifests (vault.py), importable by the tests and by the servers the validator starts."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).parent
for path in (HERE, HERE / "fixtures"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
