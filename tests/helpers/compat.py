"""The compatibility matrix's marker: a test says which seam with a peer library it proves.

    @compat(ORS_ENV, "ors.client.ORS over --ors-wire", "works", "tools, blocks, rewards ...")
    def test_...(): ...

A seam is a peer, the peer's version and a direction (`Seam`; the ones the tests use are named
here, so a peer's version is written once). `scripts/compat_matrix.py` reads these calls from
the test files (the seam must be one of the names below, the rest string literals) and writes
docs/compatibility.md; `tests/test_compat_matrix.py` checks that the page is current. A verdict
is `works` (equal to the peer's own behaviour on what the test compares), `lossy` (runs, and
the test pins what differs) or `refused` (a clear, structured refusal, pinned by the test).
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

THEIR_ENV = "their environment, served by mcpgym"
THEIR_CLIENT = "their client, against an mcpgym environment"
MCPGYM_CLIENT = "mcpgym's client, against their server"
DIRECTIONS = (THEIR_ENV, THEIR_CLIENT, MCPGYM_CLIENT)
VERDICTS = ("works", "lossy", "refused")


class Seam(NamedTuple):
    """A peer library, the version tested, and the direction of the seam."""

    peer: str
    version: str
    direction: str


OPENENV = ("OpenEnv", "openenv 0.10.0")
OPENENV_ENV = Seam(*OPENENV, THEIR_ENV)
OPENENV_CLIENT = Seam(*OPENENV, THEIR_CLIENT)
OPENENV_SERVER = Seam(*OPENENV, MCPGYM_CLIENT)
OPENENV_CORE_ENV = Seam("OpenEnv", "openenv-core 0.3.0", THEIR_ENV)
VERIFIERS_031_ENV = Seam("Verifiers", "verifiers 0.3.1", THEIR_ENV)
VERIFIERS_040_ENV = Seam("Verifiers", "verifiers 0.4.0", THEIR_ENV)
VERIFIERS_040_CLIENT = Seam("Verifiers", "verifiers 0.4.0", THEIR_CLIENT)
ORS = ("ORS", "ors-sdk 0.1.0")
ORS_ENV = Seam(*ORS, THEIR_ENV)
ORS_CLIENT = Seam(*ORS, THEIR_CLIENT)
ORS_SERVER = Seam(*ORS, MCPGYM_CLIENT)
OPENREWARD_CLIENT = Seam("openreward", "openreward 0.1.167", THEIR_CLIENT)
TRL_CLIENT = Seam("TRL", "trl 1.16.0 (transformers 5.24.0)", THEIR_CLIENT)

__all__ = ["DIRECTIONS", "VERDICTS", "Seam", "compat"]


def compat(seam: Seam, client: str, verdict: str, what: str) -> pytest.MarkDecorator:
    """Mark a test as the proof of one cell of the compatibility matrix."""
    if not isinstance(seam, Seam) or seam.direction not in DIRECTIONS:
        raise ValueError(f"seam must be a Seam whose direction is one of {DIRECTIONS}: {seam!r}")
    if verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {VERDICTS}, not {verdict!r}")
    values = (seam.peer, seam.version, client, what)
    if not all(isinstance(v, str) and v.strip() for v in values):
        raise ValueError("peer, version, client and what are non-empty strings")
    return pytest.mark.compat(**seam._asdict(), client=client, verdict=verdict, what=what)
