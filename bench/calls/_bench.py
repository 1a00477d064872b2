"""What a bench/run.py measurement gets (`Bench`, `Comparison`) and the measurement registry.

A measurement is an `async def f(b: Bench) -> list[Row]` decorated with `@measurement("name",
"...")` in a module that bench/run.py imports (`_measure_load.py`, `_measure_startup.py`); they
run in registration order, i.e. in the order run.py imports those modules.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from calls._driver import Config, Driver, Run
from calls._servers import Server
from calls._table import Row


@dataclass
class Comparison:
    """Every round of both servers. Other load on the machine only ever slows a round down, so
    the best rate and the least CPU per operation are the least disturbed figures."""

    runs: dict[str, list[Run]]
    servers: dict[str, str] = field(default_factory=dict)  # role → server name

    def best(self, name: str) -> Run:
        return max(self.runs[name], key=lambda r: r.rate)

    def rate(self, name: str) -> float:
        return self.best(name).rate

    def legacy(self, what: str = "rate") -> float | None:
        """The old asyncio/h11 floor's best rate (or least CPU per op: `what="cpu"`), if run."""
        if "floor-h11" not in self.runs:
            return None
        return self.rate("floor-h11") if what == "rate" else self.cpu_us("floor-h11")

    def cpu_us(self, name: str) -> float:
        return min(r.server_us_per_op for r in self.runs[name])

    def util(self) -> str:
        """Server CPU use (1 core = 100 %) in the best rounds: near 100 % means server-bound."""
        m, f = self.best("mcpgym").server_util, self.best("floor").server_util
        return f"server busy {m:.0%} / {f:.0%}"

    def saturation(self) -> str:
        """For loads meant to saturate the server: say so when neither server was the limit."""
        m, f = self.best("mcpgym").server_util, self.best("floor").server_util
        if max(m, f) < 0.7:
            return f"{self.util()}: NOT server-bound (client or other load), compare CPU/op"
        return self.util()


@dataclass
class Bench:
    """What a measurement gets: the config, lazily started servers, and `compare`."""

    cfg: Config
    servers: dict[str, Server] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def server(self, name: str) -> Server:
        if name not in self.servers:
            srv = Server(name)
            self.servers[name] = srv  # registered first so that it is stopped even if start fails
            srv.start()
        return self.servers[name]

    async def compare(
        self,
        spec_for: Callable[[Server], dict[str, Any]],
        procs: int,
        rounds: int | None = None,
        mcpgym: str = "mcpgym",
        legacy: bool = False,
    ) -> Comparison:
        """Alternate floor and mcpgym windows for `rounds` rounds (default `cfg.rounds`).

        `mcpgym` names the server in the mcpgym role (e.g. "mcpgym-production"); the result's
        runs are keyed by role, "floor" and "mcpgym", and "floor-h11" with `legacy` (the old
        asyncio/h11 floor, a second floor column).
        """
        roles = {"floor": "floor", "mcpgym": mcpgym} | (
            {"floor-h11": "floor-h11"} if legacy else {}
        )
        runs: dict[str, list[Run]] = {role: [] for role in roles}
        drivers: dict[str, Driver] = {}
        try:
            for role, name in roles.items():
                srv = self.server(name)
                drivers[role] = Driver(srv, spec_for(srv), procs, self.cfg)
                await drivers[role].start()
            for r in range(rounds or self.cfg.rounds):
                order = list(roles) if r % 2 == 0 else list(roles)[::-1]
                for name in order:
                    run = await drivers[name].window()
                    if run.errors:
                        raise RuntimeError(
                            f"{name}: {run.errors} error replies, first: {run.first_error}"
                        )
                    runs[name].append(run)
        finally:
            for driver in drivers.values():
                await driver.close()
        return Comparison(runs, roles)

    def stop_all(self) -> None:
        for srv in self.servers.values():
            srv.stop()


Measure = Callable[[Bench], Awaitable[list[Row]]]


@dataclass(frozen=True)
class Measurement:
    name: str
    title: str
    fn: Measure
    budget_s: float = 0.0  # time it needs on top of the run's budget (bench/run.py adds it)


MEASUREMENTS: dict[str, Measurement] = {}


def measurement(name: str, title: str, budget_s: float = 0.0) -> Callable[[Measure], Measure]:
    """Register a measurement under `name` (the `--only` key); runs in registration order.
    `budget_s`: seconds it adds to the run's time budget when selected."""

    def register(fn: Measure) -> Measure:
        MEASUREMENTS[name] = Measurement(name, title, fn, budget_s)
        return fn

    return register
