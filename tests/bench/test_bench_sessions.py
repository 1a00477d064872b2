"""The session sweep's measuring (bench/calls/_driver.py, bench/calls/_load.py,
bench/figures/_measure_sessions.py,
bench/calls/_issue_table.py): windows a spec sets, server CPU read at the edges of the counted
window,
and the issue table's note when the floor itself misses an absolute limit."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench() -> Iterator[dict[str, ModuleType]]:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from calls import _bench, _driver, _issue_table, _load, _servers, _table
        from figures import _measure_sessions

        yield {
            m.__name__.rpartition(".")[2]: m
            for m in (_bench, _driver, _issue_table, _load, _measure_sessions, _servers, _table)
        }
    finally:
        sys.path.remove(str(ROOT / "bench"))


def test_server_cpu_is_read_from_proc(bench: dict[str, ModuleType]) -> None:
    load = bench["_load"]
    before = load._server_cpu_s(os.getpid())
    t0 = time.process_time()
    while time.process_time() - t0 < 0.2:  # burn 0.2 s of CPU
        pass
    spent = load._server_cpu_s(os.getpid()) - before
    assert 0.15 <= spent <= 0.4  # clock ticks of 10 ms
    assert load._server_cpu_s(None) is None


def test_windows_grow_with_k_and_not_in_quick_mode(bench: dict[str, ModuleType]) -> None:
    sessions, driver = bench["_measure_sessions"], bench["_driver"]
    b = bench["_bench"].Bench(driver.Config.make(False))
    assert sessions._windows(b, 100) == {"rewarm_s": 0.2, "duration_s": 2.0}  # the preset
    big = sessions._windows(b, 1000)
    assert big["rewarm_s"] >= 1.0 and big["duration_s"] >= 4.0
    assert sessions._windows(bench["_bench"].Bench(driver.Config.make(True)), 1000) == {}


@pytest.mark.server
@pytest.mark.timeout(60)
def test_a_window_counts_and_charges_only_its_own_steps(bench: dict[str, ModuleType]) -> None:
    """A real server and a real load worker: the spec's windows win over the preset, the step
    count and the server CPU cover the same counted window (the re-warm is excluded)."""
    from figures._measure_load import _ws_spec

    driver_mod = bench["_driver"]
    srv = bench["_servers"].Server("mcpgym")
    srv.start()
    try:
        cfg = driver_mod.Config.make(True)  # 1 s windows, 0.1 s re-warm
        spec = _ws_spec(20)(srv) | {"latencies": True, "rewarm_s": 1.0, "duration_s": 0.6}
        driver = driver_mod.Driver(srv, spec, 2, cfg)

        async def one() -> object:
            try:
                await driver.start()
                cpu0 = srv.cpu_s()
                t0 = time.perf_counter()
                run = await driver.window()
                return run, srv.cpu_s() - cpu0, time.perf_counter() - t0
            finally:
                await driver.close()

        run, outer_cpu, outer_s = asyncio.run(one())
    finally:
        srv.stop()
        srv.log.close()
    assert run.errors == 0 and run.count > 50
    assert 0.55 <= run.elapsed <= 1.0  # the spec's 0.6 s, not the preset's 1 s
    assert outer_s >= 1.5  # re-warm (1 s) + counted window (0.6 s)
    # the CPU charged to the counted steps is the window's share, not the re-warm's as well
    assert 0 < run.server_cpu_s < 0.75 * outer_cpu  # ~0.6 / 1.6 of it; it was all of it
    assert run.p50_us is not None and run.p99_us is not None and run.p50_us <= run.p99_us


def test_issue_table_notes_when_the_floor_misses_a_limit(bench: dict[str, ModuleType]) -> None:
    row, table = bench["_table"].Row, bench["_issue_table"]
    rows = [
        row("wsk100", "K=100", "steps/s", 6000.0, 10000.0, target=0.7),
        row("wsk100_p99", "p99", "ms", 31.8, 22.8, False, limit=20.0),
        row("wsk500", "K=500", "steps/s", 7000.0, 9900.0, target=0.7),
        row("wsk500_p99", "p99", "ms", 50.0, 40.0, False, limit=60.0),
    ]
    lines = {t["figure"]: t for t in table.collect(rows)}
    k100 = lines["WS K=100 aggregate steps/s; p99"]
    assert k100["met"] is False  # the target is unchanged: still ✗
    assert "the floor misses 20.0 ms too (22.8 ms) on this machine" in k100["note"]
    k500 = lines["WS K=500 aggregate steps/s; p99"]
    assert k500["met"] is True and k500["note"] == ""  # the floor meets 60 ms: no note


def test_default_max_sessions_holds_the_sweep(bench: dict[str, ModuleType]) -> None:
    """The sweep runs `mcpgym serve` with its default `--max-sessions` (a trainer's rollout batch
    of 500+ sessions must fit): the default must hold the sweep's largest K, on `/ws` and in the
    library settings alike."""
    from mcpgym.servers.cli.main import build_parser
    from mcpgym.servers.settings import ServerSettings

    args = build_parser(plugins=False).parse_args(["serve", "mcpgym.examples.guess:GuessEnv"])
    largest = max(bench["_measure_sessions"].SWEEP)
    assert largest >= 1000
    assert args.max_sessions >= largest
    assert ServerSettings().max_sessions == args.max_sessions


def test_the_floor_gets_the_same_collector_settings_without_importing_mcpgym() -> None:
    """bench/calls/_floor.py loads servers/gc_tuning.py as a file: the same settings as `mcpgym
    serve`,
    and not one mcpgym module in the floor's process (its start-up and RSS stay the bare app's)."""
    import json
    import subprocess

    from mcpgym.servers import gc_tuning

    code = (
        "import json, sys; sys.path.insert(0, 'bench'); from calls import _floor; "
        "m = _floor.gc_tuning(); "
        "ours = sorted(n for n in sys.modules if n.split('.')[0] == 'mcpgym'); "
        "print(json.dumps([m.GEN0_THRESHOLD, ours]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    threshold, mcpgym_modules = json.loads(out.stdout)
    assert threshold == gc_tuning.GEN0_THRESHOLD
    assert mcpgym_modules == []
