"""Where an environment's code runs, and how `timeout_s` is kept for each kind of method.

- **async** methods run on the event loop; on timeout (or when the caller is cancelled, e.g. the
  client went away) the task is cancelled.
- **sync** methods of a `blocking = True` class (the default) run in the shared `WorkerPool`.
  A thread cannot be stopped: on timeout the call is detached from the pool (which replaces the
  thread, so other sessions keep their capacity) and the instance is marked *overdue*: it refuses
  every call with `InstanceBusy` until that call really returns, and says so.
- **sync** methods of a `blocking = False` class run inline on the loop, the cheapest path (no
  thread hop), for code its author promises is short. The promise is checked, not trusted: a
  call that ran past its timeout is answered as a timeout (its effects may have applied), and a
  method that held the loop longer than the class's `inline_budget_s` runs in the pool from then
  on (on its second overrun within a minute: one may be the machine preempting the loop's
  thread), so a slow call cannot become a habit. Timing an inline call costs two clock reads.

Every runner takes the instance's lock already acquired and releases it exactly once: when the
call has really finished (a thread's call may finish after its caller gave up). The inline hot
path (`Environment._exclusive` with `call_inline`/`check_inline`) takes no lock while nothing
else of the instance runs: a sync call cannot yield, so it cannot overlap another.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Callable, Coroutine
from types import CodeType, FunctionType, GeneratorType
from typing import Any

from mcpgym.errors import InstanceBusy, ToolTimeout
from mcpgym.runtime.workers import DETACHED, DROPPED, Expired, Job, expire, shared_pool

__all__ = [
    "awaitable",
    "busy_error",
    "call_inline",
    "check_inline",
    "is_coroutine_function",
    "is_demoted",
    "require_no_running_loop",
    "run_async",
    "run_in_pool",
    "run_inline",
    "timeout_note",
    "tool_timeout",
]

log = logging.getLogger("mcpgym")
_clock = time.perf_counter


_ASYNC_BY_CODE: dict[CodeType, bool] = {}
# what `inspect.markcoroutinefunction` (3.12) sets: the only attribute that changes the answer
_MARKER = "_is_coroutine_marker"
_AWAITABLE_BY_TYPE: dict[type, bool] = dict.fromkeys(
    (type(None), bool, int, float, str, bytes, dict, list, tuple), False
)


def is_coroutine_function(method: Callable[..., Any]) -> bool:
    """`inspect.iscoroutinefunction`, remembered per code object for plain functions and bound
    methods (the per-call path; code objects are few and live as long as their functions)."""
    func = getattr(method, "__func__", method)
    if type(func) is not FunctionType or _MARKER in func.__dict__:  # partials, marked: ask inspect
        return inspect.iscoroutinefunction(method)
    code = func.__code__
    known = _ASYNC_BY_CODE.get(code)
    if known is None:
        known = _ASYNC_BY_CODE[code] = inspect.iscoroutinefunction(func)
    return known


def awaitable(value: Any) -> bool:
    """`inspect.isawaitable`, with the answer for a result's class remembered: an ABC check per
    call costs more than most tools. Generators differ per object (`types.coroutine`): asked."""
    kind = type(value)
    known = _AWAITABLE_BY_TYPE.get(kind)
    if known is None:
        known = inspect.isawaitable(value)
        if kind is not GeneratorType and len(_AWAITABLE_BY_TYPE) < 4096:
            _AWAITABLE_BY_TYPE[kind] = known
    return known


def busy_error(env: Any) -> InstanceBusy:
    """The error for a call to an instance whose timed-out call still runs."""
    overdue = env.overdue_call or {}
    return InstanceBusy(
        f"{type(env).__name__} is still running {overdue.get('call', 'a call')!r}, which timed "
        f"out {overdue.get('overdue_s', 0)} s ago; this instance is unusable until that call "
        "returns (start a new session, or wait and retry)",
        **overdue,
    )


def timeout_note(detail: dict[str, Any]) -> str:
    """The part of a timeout message that says what became of the call."""
    if detail.get("still_running"):
        return "; it is still running in a worker thread and the instance is busy until it returns"
    if "ran_s" in detail:
        return f"; it ran inline for {detail['ran_s']} s and its effects may have applied"
    return ""


def is_demoted(cls: type, method: Callable[..., Any]) -> bool:
    """Whether an inline method of `cls` was moved to the pool for holding the loop too long."""
    demoted: set[str] | None = cls.__dict__.get("_mcpgym_demoted")
    return demoted is not None and getattr(method, "__name__", "") in demoted


# The last overrun of the inline budget, by (class, method name), as a `_now()` time. One overrun
# may be the machine's doing (the loop's thread preempted under load), so a method is moved to
# the pool on its second overrun within `STRIKE_WINDOW_S`. Calls within the budget in between do
# not forgive it: a tool whose slow path an agent can trigger at will must not stall everybody
# on every other call. A hold no preemption explains (`_HARD_HOLD`x the budget, at least
# `_HARD_HOLD_S`) moves it at once. So a method that is never demoted stalls the loop at most
# once per window, for less than `_HARD_HOLD_S`.
_STRIKES: dict[tuple[type, str], float] = {}
STRIKE_WINDOW_S = 60.0
_HARD_HOLD, _HARD_HOLD_S = 10.0, 0.25  # a 250 ms preemption: a machine past usable
_now = time.monotonic


def _overran(cls: type, name: str, held_s: float, budget: float) -> None:
    now, key = _now(), (cls, name)
    last = _STRIKES.get(key)
    if (last is not None and now - last <= STRIKE_WINDOW_S) or held_s >= max(
        _HARD_HOLD * budget, _HARD_HOLD_S
    ):
        _STRIKES.pop(key, None)
        _demote(cls, name, held_s)
    else:
        _STRIKES[key] = now
        log.info(
            "%s.%s held the event loop for %.3f s (inline_budget_s=%s); once more within %.0f s "
            "and it moves to the worker pool",
            cls.__name__,
            name,
            held_s,
            budget,
            STRIKE_WINDOW_S,
        )


def _demote(cls: type, name: str, held_s: float) -> None:
    demoted: set[str] | None = cls.__dict__.get("_mcpgym_demoted")
    if demoted is None:
        demoted = set()
        type.__setattr__(cls, "_mcpgym_demoted", demoted)
    if name not in demoted:
        demoted.add(name)
        log.warning(
            "%s.%s held the event loop for %.3f s (inline_budget_s=%s); it runs in the worker "
            "pool from now on. Set blocking = True, or make the call cheaper.",
            cls.__name__,
            name,
            held_s,
            getattr(cls, "inline_budget_s", None),
        )


def check_inline(
    env: Any, method: Callable[..., Any], held: float, timeout_s: float | None
) -> None:
    """After an inline call that held the loop `held` seconds: count an overrun of the class's
    budget, and raise `TimeoutError` if the call overran its timeout."""
    cls = type(env)
    budget = cls.inline_budget_s
    if budget is not None and held > budget:
        _overran(cls, getattr(method, "__name__", "call"), held, budget)
    if timeout_s is not None and held > timeout_s:
        raise TimeoutError({"ran_s": round(held, 3)})


async def run_async(
    lock: asyncio.Lock,
    method: Callable[..., Coroutine[Any, Any, Any]],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    timeout_s: float | None,
) -> Any:
    """An async method on the loop, cancelled on timeout or when the caller is cancelled."""
    try:
        task = asyncio.ensure_future(method(*args, **kwargs))
    except BaseException:
        lock.release()
        raise
    task.add_done_callback(lambda _: lock.release())
    try:
        done, _ = await asyncio.wait([task], timeout=timeout_s)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not done:
        task.cancel()
        raise TimeoutError({})
    return task.result()


async def run_in_pool(
    env: Any,
    lock: asyncio.Lock,
    method: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    timeout_s: float | None,
) -> Any:
    """A sync method in the shared pool; detached (and the instance marked overdue) on timeout.

    The worker's outcome goes straight to `done` on the loop, which releases the instance's lock
    when the call has really returned (also after its caller gave up) and wakes the caller.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def done(job: Job, ok: bool, value: Any) -> None:
        lock.release()
        if job.state is DETACHED:  # the overdue call returned: the instance is usable again
            env.__dict__.pop("_mcpgym_overdue", None)
        if not future.done():
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    try:
        job = shared_pool().submit(method, args, kwargs, done=done)
    except BaseException:
        lock.release()
        raise
    timer = None if timeout_s is None else loop.call_later(timeout_s, expire, future)
    try:
        result = await future
    except Expired:
        state = _give_up(env, lock, job, method, timeout_s)
        raise TimeoutError({"still_running": True} if state == DETACHED else {}) from None
    except asyncio.CancelledError:
        _give_up(env, lock, job, method, timeout_s)
        raise
    finally:
        if timer is not None:
            timer.cancel()
    return (await result) if awaitable(result) else result


def _give_up(env: Any, lock: asyncio.Lock, job: Job, method: Any, timeout_s: float | None) -> str:
    """Stop waiting for `job`; a detached call marks the instance overdue until it returns."""
    state = shared_pool().abandon(job)
    if state == DROPPED:  # it never ran, so `done` never runs: the lock is free now
        lock.release()
    elif state == DETACHED:
        env.__dict__["_mcpgym_overdue"] = {
            "call": getattr(method, "__name__", "call"),
            "timeout_s": timeout_s,
            "since": time.monotonic(),
        }
    return state


def call_inline(method: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run a sync method on the loop's thread; returns (result, seconds it held the loop)."""
    start = _clock()
    result = method(*args, **kwargs)
    return result, _clock() - start


async def run_inline(
    env: Any,
    lock: asyncio.Lock,
    method: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    timeout_s: float | None,
) -> Any:
    """A sync method inline on the loop, timed, with the instance's lock held: overrunning its
    timeout or the class's inline budget is caught after the fact (see the module docstring).

    `Environment._exclusive` takes a cheaper path when the lock is free: a sync call does not
    yield, so nothing of the instance can run beside it (`call_inline`, `check_inline`)."""
    try:
        result, held = call_inline(method, args, kwargs)
        if awaitable(result):
            result = await result
    finally:
        lock.release()
    check_inline(env, method, held, timeout_s)
    return result


def tool_timeout(name: str, timeout_s: float | None, exc: TimeoutError) -> ToolTimeout:
    """The `ToolTimeout` for tool `name` whose call overran `timeout_s` (`exc` from the runner)."""
    detail = dict(exc.args[0]) if exc.args and isinstance(exc.args[0], dict) else {}
    note = timeout_note(detail)
    msg = f"Tool {name!r} did not finish within {timeout_s} s{note}"
    return ToolTimeout(msg, tool=name, timeout_s=timeout_s, **detail)


def require_no_running_loop() -> None:
    """An async tool through sync `step()` needs its own event loop: refuse inside a running one."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError("step() cannot run an async tool inside a running event loop; use astep().")
