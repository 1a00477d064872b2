"""`mcpgym.pool` exports exactly its documented names, each with a docstring."""

from __future__ import annotations

import mcpgym.pool as pool


def test_pool_exports_are_pinned_and_documented() -> None:
    assert sorted(pool.__all__) == [
        "EnvPool",
        "InfrastructureError",
        "PROVIDER_KINDS",
        "PoolMember",
        "PoolSession",
        "SyncEnvPool",
        "make_provider",
        "parse_pool_spec",
    ]
    for name in pool.__all__:
        obj = getattr(pool, name)
        assert name == "PROVIDER_KINDS" or obj.__doc__, name
    public = {n for n in dir(pool) if not n.startswith("_")} - {"kinds"}
    assert public == set(pool.__all__)
