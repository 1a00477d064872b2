"""The run gate: at most `slots` runs of a server at once, FIFO, a structured refusal after
`wait_s`; queued time is not charged to a run's wall time; a full gate refuses a tool call
with SANDBOX_BUSY and nothing runs."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from code_gym import CodeEnv
from code_gym.sandbox import RUN_GATE, Limits, RunGate, Sandbox, SandboxBusy
from mcpgym import CallToolAction
from sandbox_helpers import BoxFactory

pytestmark = pytest.mark.code


async def _hold(gate: RunGate, seconds: float, log: list[tuple[str, int]], name: int) -> None:
    async with gate.aslot():
        log.append(("in", name))
        await asyncio.sleep(seconds)
        log.append(("out", name))


def _peak(log: list[tuple[str, int]]) -> int:
    now = peak = 0
    for kind, _ in log:
        now += 1 if kind == "in" else -1
        peak = max(peak, now)
    return peak


@pytest.mark.parametrize("slots", [1, 2, 3])
def test_at_most_slots_runs_hold_the_gate_and_they_enter_in_order(slots: int) -> None:
    gate = RunGate(slots=slots, wait_s=30)
    log: list[tuple[str, int]] = []

    async def main() -> None:
        tasks = []
        for i in range(8):
            tasks.append(asyncio.create_task(_hold(gate, 0.02, log, i)))
            await asyncio.sleep(0)  # queued in this order
        await asyncio.gather(*tasks)

    asyncio.run(main())
    assert _peak(log) == slots
    assert [n for kind, n in log if kind == "in"] == list(range(8))
    assert (gate.busy, gate.queued) == (0, 0)


def test_threads_and_event_loops_share_one_gate() -> None:
    gate = RunGate(slots=2, wait_s=30)
    log: list[tuple[str, int]] = []
    lock = threading.Lock()

    def in_thread(i: int) -> None:
        with gate.slot():
            with lock:
                log.append(("in", i))
            time.sleep(0.03)
            with lock:
                log.append(("out", i))

    threads = [threading.Thread(target=in_thread, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()

    async def main() -> None:
        await asyncio.gather(*(_hold(gate, 0.03, log, 10 + i) for i in range(4)))

    asyncio.run(main())
    for t in threads:
        t.join()
    assert _peak(log) == 2 and len(log) == 16
    assert (gate.busy, gate.queued) == (0, 0)


def test_a_run_that_waits_too_long_is_refused_and_leaves_the_line() -> None:
    gate = RunGate(slots=1, wait_s=0.05)

    async def main() -> None:
        async with gate.aslot():
            with pytest.raises(SandboxBusy, match="1 sandbox run slots"):
                async with gate.aslot():
                    raise AssertionError("entered a full gate")
            assert (gate.busy, gate.queued) == (1, 0)

    asyncio.run(main())
    with gate.slot():
        done: list[BaseException] = []

        def other() -> None:
            try:
                with gate.slot():
                    pass
            except SandboxBusy as exc:
                done.append(exc)

        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert len(done) == 1 and gate.queued == 0
    assert (gate.busy, gate.queued) == (0, 0)


def test_a_run_cancelled_while_queued_gives_its_place_back() -> None:
    gate = RunGate(slots=1, wait_s=30)

    async def main() -> None:
        async with gate.aslot():
            waiter = asyncio.create_task(_hold(gate, 0, [], 1))
            await asyncio.sleep(0.01)
            assert gate.queued == 1
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
        assert (gate.busy, gate.queued) == (0, 0)
        async with gate.aslot():  # the gate still works
            assert gate.busy == 1

    asyncio.run(main())


def test_a_synchronous_run_on_an_event_loop_never_waits_for_that_loop() -> None:
    """The loop's own runs hold every slot and cannot end while a synchronous run blocks the
    loop: that run takes a slot over the count instead of waiting (and deadlocking)."""
    gate = RunGate(slots=1, wait_s=5)

    async def main() -> None:
        async with gate.aslot():
            t0 = time.monotonic()
            with gate.slot():
                assert gate.busy == 2
            assert time.monotonic() - t0 < 1

    asyncio.run(main())
    assert gate.busy == 0


@pytest.mark.parametrize(
    "kwargs", [{"slots": 0}, {"slots": True}, {"slots": 1.5}, {"wait_s": -1}, {"wait_s": "x"}]
)
def test_bad_settings_are_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        RunGate(**{"slots": 1, "wait_s": 1, **kwargs})


@pytest.fixture
def one_slot() -> Iterator[None]:
    slots, wait_s = RUN_GATE.slots, RUN_GATE.wait_s
    RUN_GATE.configure(slots=1, wait_s=30)
    yield
    RUN_GATE.configure(slots=slots, wait_s=wait_s)


def test_queued_time_is_not_charged_to_a_runs_wall_time(
    make_box: BoxFactory, one_slot: None
) -> None:
    """Two 2.5 s sleeps with `wall_s=4` through one slot: both finish (the second waited about
    2.5 s for its slot, which its wall limit does not count: charged, it would pass 4 s), one
    after the other."""
    boxes = [make_box(wall_s=4), make_box(wall_s=4)]

    async def main() -> list[Any]:
        return await asyncio.gather(
            *(b.arun(["python", "-c", "import time; time.sleep(2.5)"]) for b in boxes)
        )

    t0 = time.monotonic()
    results = asyncio.run(main())
    assert all(r.exit_code == 0 and r.killed is None for r in results), results
    assert time.monotonic() - t0 >= 5.0


def test_a_full_gate_answers_sandbox_busy_and_nothing_runs(make_box: BoxFactory) -> None:
    env = CodeEnv()
    slots, wait_s = RUN_GATE.slots, RUN_GATE.wait_s
    try:
        env.reset(task_id="HumanEval/53")
        RUN_GATE.configure(slots=1, wait_s=0.1)
        with RUN_GATE.slot():  # another session's run holds the only slot
            for tool, args in (
                ("run_python", {"code": "open('ran', 'w').write('x')"}),
                ("run_tests", {}),
                ("submit", {}),
            ):
                obs = env.step(CallToolAction(tool_name=tool, arguments=args))
                err = obs.error.model_dump()["error"]  # type: ignore[attr-defined]
                assert (err["code"], err["tool"]) == ("SANDBOX_BUSY", tool), err
                assert "again" in err["hint"]
        assert "ran" not in env.sandbox.list_files()
        assert env.state.submitted is False
        out = env.step(CallToolAction(tool_name="submit", arguments={}))
        assert out.error is None and env.state.submitted  # type: ignore[attr-defined]
    finally:
        RUN_GATE.configure(slots=slots, wait_s=wait_s)
        env.close()


def test_every_sandbox_run_goes_through_the_gate(box: Sandbox, one_slot: None) -> None:
    """A synchronous run waits while the only slot is held elsewhere, then runs."""
    held = threading.Event()
    release = threading.Event()

    def holder() -> None:
        with RUN_GATE.slot():
            held.set()
            release.wait(10)

    t = threading.Thread(target=holder)
    t.start()
    held.wait(10)
    threading.Timer(0.5, release.set).start()
    t0 = time.monotonic()
    r = box.run(["python", "-c", "print(1)"], limits=Limits(wall_s=5))
    t.join()
    assert r.stdout == "1\n" and time.monotonic() - t0 >= 0.5
