"""Environment pools: N servers from one provider, sessions placed by least load.

    async with EnvPool(ProcessProvider("calendar_gym:CalendarEnv"), size=4) as pool:
        async with pool.session() as env:        # an mcpgym EnvClient, sticky to one server
            await env.reset(seed=1)
            ...

A session whose server dies fails with `InfrastructureError` (retry it elsewhere; it is not the
agent's failure); the dead server is replaced in the background. `SyncEnvPool` is the blocking
twin (`with SyncEnvPool(...) as pool: with pool.session() as env: ...`). `make_provider` builds
a provider from a kind name (`process`, `ray`, `kubernetes`, `swarm`, `docker`), as
`mcpgym eval --pool KIND:N` does.
"""

from mcpgym.pool._members import InfrastructureError, PoolMember, PoolSession
from mcpgym.pool._pool import EnvPool
from mcpgym.pool._sync import SyncEnvPool
from mcpgym.pool.kinds import PROVIDER_KINDS, make_provider, parse_pool_spec

__all__ = [
    "PROVIDER_KINDS",
    "EnvPool",
    "InfrastructureError",
    "PoolMember",
    "PoolSession",
    "SyncEnvPool",
    "make_provider",
    "parse_pool_spec",
]
