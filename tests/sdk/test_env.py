"""`Environment` and `MCPEnvironment`: the episode contract, tool steps, threads, timeouts."""

import asyncio
import threading
from typing import Any, Literal

import pytest

from helpers.envs import (
    AsyncCounter,
    CountAction,
    CountObservation,
    CountState,
    InlineCounter,
    SyncCounter,
)
from helpers.wait import await_until
from mcpgym import (
    Action,
    CallToolAction,
    CallToolObservation,
    Environment,
    ListToolsAction,
    ListToolsObservation,
    MCPEnvironment,
    Observation,
    State,
    tool,
)
from mcpgym.errors import (
    ExecutionError,
    InstanceBusy,
    InvalidRequest,
    SessionError,
    StepTimeout,
)


class Toolbox(MCPEnvironment):
    """A tool environment with one tool per behaviour under test."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.entered_block = threading.Event()
        self.threads: dict[str, int] = {}
        self.log: list[str] = []

    @tool
    def add(self, a: int, b: int = 1) -> int:
        self.threads["add"] = threading.get_ident()
        self.log.append("add")
        return a + b

    @tool
    async def shout(self, text: str) -> str:
        self.threads["shout"] = threading.get_ident()
        return text.upper()

    @tool
    def fail(self) -> str:
        raise ValueError("broken tool")

    @tool
    async def afail(self) -> str:
        raise KeyError("missing key")

    @tool(mode="simulation")
    def peek(self) -> str:
        return "secret"

    @tool(mode="production")
    def live(self) -> str:
        return "live"

    @tool
    async def hang(self) -> str:
        await asyncio.Event().wait()
        return "never"

    @tool
    def block(self) -> str:
        self.entered_block.set()
        assert self.gate.wait(10), "the test never opened the gate"
        self.log.append("block")
        return "unblocked"

    @tool
    def finish(self) -> str:
        self.end_episode()
        return "finished"

    def reward(self, action: Action, observation: Observation) -> float | None:
        if isinstance(observation, CallToolObservation):
            return 0.0 if observation.error else 1.0
        return None


class InlineToolbox(Toolbox):
    blocking = False


def call(name: str, **arguments: Any) -> CallToolAction:
    return CallToolAction(tool_name=name, arguments=arguments)


async def astep(env: Toolbox, action: Any, timeout_s: float | None = None) -> Any:
    return await asyncio.wait_for(env.astep(action, timeout_s=timeout_s), 5.0)


async def run(env: Toolbox, action: Any, via: str) -> Any:
    """`astep` on the loop, or the sync `step` the way sync code calls it: from a thread."""
    if via == "astep":
        return await astep(env, action)
    return await asyncio.wait_for(asyncio.to_thread(env.step, action), 5.0)


@pytest.fixture
def env() -> Toolbox:
    box = Toolbox()
    box.reset(episode_id="ep")
    return box


# -- the episode ---------------------------------------------------------------------------------


def test_reset_starts_an_episode() -> None:
    box = Toolbox()
    assert box.state == State()  # before any reset: an empty state, no exception
    obs = box.reset(episode_id="ep-1")
    assert isinstance(obs, Observation) and obs.done is False
    assert box.state.episode_id == "ep-1" and box.state.step_count == 0
    box.reset()
    assert box.state.episode_id and box.state.episode_id != "ep-1"


async def test_step_before_reset_is_a_session_error() -> None:
    box = Toolbox()
    with pytest.raises(SessionError, match="reset"):
        box.step(ListToolsAction())
    with pytest.raises(SessionError, match="reset"):
        await box.astep(call("add", a=1))


@pytest.mark.parametrize("via", ["step", "astep"])
async def test_list_tools_is_a_step(env: Toolbox, via: str) -> None:
    obs = await run(env, ListToolsAction(), via)
    assert isinstance(obs, ListToolsObservation)
    names = {t.name for t in obs.tools}
    assert names == {"add", "shout", "fail", "afail", "peek", "hang", "block", "finish"}
    add = next(t for t in obs.tools if t.name == "add")
    assert add.input_schema["required"] == ["a"]
    assert env.state.step_count == 1


@pytest.mark.parametrize("via", ["step", "astep"])
@pytest.mark.parametrize(
    ("action", "result"),
    [(call("add", a=2, b=3), 5), (call("shout", text="hi"), "HI")],
    ids=["sync", "async"],
)
async def test_sync_and_async_tools(
    env: Toolbox, via: str, action: CallToolAction, result: Any
) -> None:
    obs = await run(env, action, via)
    assert isinstance(obs, CallToolObservation)
    assert (obs.tool_name, obs.result, obs.error) == (action.tool_name, result, None)
    assert obs.reward == 1.0 and obs.done is False
    assert env.state.step_count == 1


def test_sync_step_runs_an_async_tool_outside_a_loop(env: Toolbox) -> None:
    assert env.step(call("shout", text="x")).result == "X"


@pytest.mark.parametrize("via", ["step", "astep"])
@pytest.mark.parametrize(
    ("name", "message"),
    [("fail", "ValueError: broken tool"), ("afail", "KeyError")],
    ids=["sync", "async"],
)
async def test_a_raising_tool_is_an_execution_error_observation(
    env: Toolbox, via: str, name: str, message: str
) -> None:
    obs = await run(env, call(name), via)
    assert obs.result is None
    assert obs.error is not None
    assert obs.error.error_type == "execution_error"
    assert message in obs.error.message
    assert obs.reward == 0.0
    assert env.state.step_count == 1


@pytest.mark.parametrize("via", ["step", "astep"])
async def test_unknown_tool_suggests_near_names(env: Toolbox, via: str) -> None:
    obs = await run(env, call("ad", a=1), via)
    assert obs.error is not None
    assert obs.error.error_type == "tool_not_found"
    assert "add" in obs.error.model_extra["suggestions"]
    assert "did you mean" in obs.error.message
    assert env.state.step_count == 1


async def test_invalid_arguments_are_data(env: Toolbox) -> None:
    obs = await astep(env, call("add", a="x", c=1))
    assert obs.error is not None and obs.error.error_type == "invalid_args"
    assert {e["field"] for e in obs.error.model_extra["errors"]} == {"a", "c"}


@pytest.mark.parametrize(
    ("mode", "hidden", "shown"), [("simulation", "live", "peek"), ("production", "peek", "live")]
)
async def test_a_tool_hidden_in_the_mode_does_not_exist(
    env: Toolbox, mode: Literal["simulation", "production"], hidden: str, shown: str
) -> None:
    env.serving_mode = mode
    names = {t.name for t in (await astep(env, ListToolsAction())).tools}
    assert shown in names and hidden not in names
    obs = await astep(env, call(hidden))
    assert obs.error is not None and obs.error.error_type == "tool_not_found"
    assert hidden not in obs.error.model_extra["suggestions"]
    assert env.step(call(hidden)).error.error_type == "tool_not_found"  # type: ignore[union-attr]
    assert (await astep(env, call(shown))).result in ("secret", "live")


async def test_end_episode_marks_done_until_the_next_reset(env: Toolbox) -> None:
    assert (await astep(env, call("add", a=1))).done is False
    assert (await astep(env, call("finish"))).done is True
    env.reset()
    assert (await astep(env, call("add", a=1))).done is False


async def test_reward_raising_is_an_environment_crash() -> None:
    class Crashy(Toolbox):
        def reward(self, action: Action, observation: Observation) -> float | None:
            raise ZeroDivisionError("bad reward")

    box = Crashy()
    box.reset()
    with pytest.raises(ExecutionError, match="ZeroDivisionError"):
        await box.astep(call("add", a=1))


# -- tool timeouts and threads ---------------------------------------------------------------------


async def test_async_tool_timeout(env: Toolbox) -> None:
    obs = await astep(env, call("hang"), timeout_s=0.05)
    assert obs.error is not None and obs.error.error_type == "timeout"
    assert obs.error.model_extra["tool"] == "hang"
    assert (await astep(env, call("add", a=1))).result == 2  # the hung call was cancelled


async def wait_for_return(env: Toolbox) -> None:
    async def returned() -> bool:
        return env.overdue_call is None

    await await_until(returned, within=5.0, what="the stuck call returns")


async def test_sync_tool_timeout_then_the_instance_says_it_is_busy(env: Toolbox) -> None:
    try:
        obs = await astep(env, call("block"), timeout_s=0.05)
        assert obs.error is not None and obs.error.error_type == "timeout"
        assert obs.error.model_extra["still_running"] is True
        assert await asyncio.to_thread(env.entered_block.wait, 5.0)  # still running in its thread
        with pytest.raises(InstanceBusy, match="unusable until that call returns") as busy:
            await env.astep(call("add", a=1))  # refused at once: never overlapping the stuck call
        assert busy.value.detail["call"] == "block"
        assert env.overdue_call is not None
    finally:
        env.gate.set()
    await wait_for_return(env)
    assert (await env.astep(call("add", a=1))).result == 2
    assert env.log == ["block", "add"]


@pytest.mark.parametrize(("cls", "in_worker"), [(Toolbox, True), (InlineToolbox, False)])
async def test_blocking_decides_where_sync_tools_run(cls: type[Toolbox], in_worker: bool) -> None:
    box = cls()
    box.reset()
    await astep(box, call("add", a=1))
    await astep(box, call("shout", text="x"))
    here = threading.get_ident()
    assert (box.threads["add"] != here) is in_worker
    assert box.threads["shout"] == here  # async tools always run on the loop


# -- plain environments ----------------------------------------------------------------------------

PLAIN = [SyncCounter, AsyncCounter, InlineCounter]


@pytest.mark.parametrize("cls", PLAIN)
async def test_plain_environment_through_areset_and_astep(cls: type[SyncCounter]) -> None:
    env = cls()
    first = await env.areset(seed=1, episode_id="p1")
    assert isinstance(first, CountObservation) and first.total == 0
    obs = await env.astep(CountAction(by=4))
    assert (obs.total, obs.reward, obs.done) == (4, 4.0, False)
    obs = await env.astep(CountAction(by=6), timeout_s=5.0)
    assert (obs.total, obs.done) == (10, True)
    assert env.state == CountState(episode_id="p1", step_count=2, total=10)
    await env.aclose()
    assert env.closed


@pytest.mark.parametrize("cls", PLAIN)
async def test_plain_environment_raising_is_an_execution_error(cls: type[SyncCounter]) -> None:
    env = cls()
    await env.areset()
    with pytest.raises(ExecutionError) as caught:
        await env.astep(CountAction(op="boom"))
    assert caught.value.detail["exception"] == "RuntimeError"
    assert "boom" in caught.value.message
    assert (await env.astep(CountAction())).total == 1  # still usable


@pytest.mark.parametrize(
    ("cls", "in_worker"), [(SyncCounter, True), (InlineCounter, False), (AsyncCounter, False)]
)
async def test_blocking_decides_where_sync_methods_run(
    cls: type[SyncCounter], in_worker: bool
) -> None:
    env = cls()
    await env.areset()
    await env.astep(CountAction())
    here = threading.get_ident()
    assert len(env.threads) == 2
    assert all((t != here) is in_worker for t in env.threads), (env.threads, here)


async def test_slow_sync_step_times_out_then_busy_and_close_waits() -> None:
    env = SyncCounter()
    await env.areset()
    try:
        with pytest.raises(StepTimeout) as caught:
            await env.astep(CountAction(op="block"), timeout_s=0.05)
        assert isinstance(caught.value, ExecutionError)
        assert caught.value.detail["timeout_s"] == 0.05
        assert caught.value.detail["still_running"] is True
        assert await asyncio.to_thread(env.entered_block.wait, 5.0)  # still running in its thread
        with pytest.raises(InstanceBusy):
            await env.astep(CountAction())
        closing = asyncio.ensure_future(env.aclose())
        done, _ = await asyncio.wait([closing], timeout=0.2)
        assert not done, "close entered the environment while the timed-out step still ran"
        assert env.entered == ["reset", "step:block"]
    finally:
        env.gate.set()
    await asyncio.wait_for(closing, 5.0)
    assert env.entered == ["reset", "step:block"]
    assert env.max_active == 1
    assert env.closed


async def test_slow_async_step_times_out_and_is_cancelled() -> None:
    env = AsyncCounter()
    await env.areset()
    with pytest.raises(StepTimeout):
        await env.astep(CountAction(op="block"), timeout_s=0.05)
    obs = await asyncio.wait_for(env.astep(CountAction()), 5.0)
    assert obs.total == 1  # the timed-out step never applied
    await asyncio.wait_for(env.aclose(), 5.0)
    assert env.max_active == 1


async def test_concurrent_calls_of_one_instance_never_overlap() -> None:
    env = SyncCounter()
    await env.areset()
    blocked = asyncio.ensure_future(env.astep(CountAction(op="block")))
    await await_until(
        lambda: _is_set(env.entered_block), within=2.0, what="the blocking step to start"
    )
    others = [asyncio.ensure_future(env.astep(CountAction())) for _ in range(5)]
    env.gate.set()
    results = await asyncio.wait_for(asyncio.gather(blocked, *others), 5.0)
    assert sorted(r.total for r in results) == [1, 2, 3, 4, 5, 6]
    assert env.max_active == 1


async def _is_set(event: threading.Event) -> bool:
    return event.is_set()


# -- parsing and metadata --------------------------------------------------------------------------


def test_parse_action_validates_into_the_action_type() -> None:
    env = SyncCounter()
    assert env.parse_action({"op": "inc", "by": 2}) == CountAction(by=2)
    with pytest.raises(InvalidRequest) as caught:
        env.parse_action({"op": "jump", "by": "two", "extra": 1})
    assert {e["field"] for e in caught.value.detail["errors"]} == {"op", "by", "extra"}
    with pytest.raises(InvalidRequest, match="JSON object"):
        env.parse_action([1, 2])


class Left(Action):
    left: int


class Right(Action):
    right: int


class LeftEnv(SyncCounter):
    action_type = Left


class RightEnv(LeftEnv):
    action_type = Right


def test_parse_action_uses_each_subclass_action_type() -> None:
    assert LeftEnv().parse_action({"left": 1}) == Left(left=1)
    assert RightEnv().parse_action({"right": 2}) == Right(right=2)
    assert LeftEnv().parse_action({"left": 3}) == Left(left=3)


def test_mcp_parse_action_reports_fields_without_the_discriminator() -> None:
    env = Toolbox()
    assert env.parse_action({"type": "list_tools"}) == ListToolsAction()
    assert env.parse_action({"type": "call_tool", "tool_name": "add"}) == CallToolAction(
        tool_name="add"
    )
    with pytest.raises(InvalidRequest) as caught:
        env.parse_action({"type": "call_tool", "tool_name": "", "arguments": [], "x": 1})
    assert {e["field"] for e in caught.value.detail["errors"]} == {"tool_name", "arguments", "x"}


def test_mcp_action_without_type_is_a_call_when_it_names_a_tool() -> None:
    """CallToolAction's schema defaults `type`: a call without it (as verifiers' `openenv`
    taskset sends what a model wrote from that schema) is a call; anything else is refused."""
    env = Toolbox()
    assert env.parse_action({"tool_name": "add", "arguments": {"a": 1}}) == CallToolAction(
        tool_name="add", arguments={"a": 1}
    )
    for bad in ({}, {"arguments": {}}, {"tool_name": ""}, {"tool_name": "add", "arguments": []}):
        with pytest.raises(InvalidRequest):
            env.parse_action(bad)


def test_metadata() -> None:
    meta = Toolbox().metadata()
    assert meta.name == "Toolbox"
    assert meta.description == "A tool environment with one tool per behaviour under test."
    assert meta.mode == "simulation"
    assert "live" not in meta.tools and "peek" in meta.tools
    plain = SyncCounter().metadata()
    assert (plain.action_type, plain.observation_type) == ("CountAction", "CountObservation")


def test_unimplemented_contract_raises_not_implemented() -> None:
    class Empty(Environment[Action, Observation, State]):
        pass

    env = Empty()
    with pytest.raises(NotImplementedError, match="reset"):
        env.reset()
    with pytest.raises(NotImplementedError, match="state"):
        _ = env.state
