"""The TRL adapter without TRL: the class's public surface, reset mapping, structured errors, the
episode's end, and the three places an environment can run (in process, URL, pool) - all against
real environments and real servers. The trainer itself runs in the `trl`-marked tests."""

from __future__ import annotations

import contextlib
import inspect
import json
from collections.abc import Iterator
from typing import Any

import pytest

from calendar_gym import CalendarEnv
from calendar_gym.tasks.taskset import CALENDAR_TASKS
from helpers.server import run_server
from mcpgym import MCPEnvironment, SyncEnvClient
from mcpgym.errors import RemoteError
from mcpgym.examples.everything import EverythingEnv
from mcpgym.examples.guess import GuessEnv
from mcpgym.integrations._signature import MethodPlan
from mcpgym.integrations.trl import ToolCallFailed, environment_factory, episode_of
from mcpgym.servers import create_app
from mcpgym.tasks import StaticTaskSet

SHIPPED: list[type[MCPEnvironment]] = [GuessEnv, EverythingEnv, CalendarEnv]


def public_functions(cls: type) -> set[str]:
    """What TRL 1.16 turns into tools (plus reset and get_reward): public functions of the class."""
    return {n for n, _ in inspect.getmembers(cls, predicate=inspect.isfunction) if n[0] != "_"}


@pytest.mark.parametrize("env_cls", SHIPPED, ids=lambda c: c.__name__)
def test_public_surface_is_the_simulation_tools(env_cls: type[MCPEnvironment]) -> None:
    adapter = environment_factory(env_cls)
    visible = {s.name for s in env_cls.tool_specs.values() if s.visible_in("simulation")}
    assert public_functions(adapter) == visible | {"reset", "get_reward"}
    # every other public name (not a function, so not a TRL tool) is none either
    assert {n for n in dir(adapter) if not n.startswith("_")} == visible | {"reset", "get_reward"}
    for name in visible:
        spec = env_cls.tool_specs[name]
        method = getattr(adapter(), name)
        sig = inspect.signature(method)
        props = spec.input_schema.get("properties", {})
        required = set(spec.input_schema.get("required", []))
        assert len(sig.parameters) == len(props)
        for param in sig.parameters.values():
            assert param.kind is param.KEYWORD_ONLY
            assert (param.default is param.empty) == (param.name in required)
            assert param.annotation is not param.empty
        assert method.__doc__ and method.__name__ == name


def test_production_only_tools_are_not_exposed() -> None:
    assert "leaderboard" not in public_functions(environment_factory(GuessEnv))


def test_reset_maps_columns_and_ignores_the_rest() -> None:
    adapter = environment_factory(GuessEnv, reset_columns={"seed": "seed", "top": "high"})
    env = adapter()
    row = {"prompt": [{"role": "user", "content": "go"}], "seed": 4, "top": 7, "odd col": [1, {}]}
    assert env.reset(**row) is None
    episode = episode_of(env)
    assert episode.reset_options == {"seed": 4, "high": 7}
    assert episode.row == row
    assert json.loads(env.hint()) == -1  # no guess yet
    assert env.reset() is None  # no columns at all


def test_a_task_set_selects_and_prompts() -> None:
    tasks = StaticTaskSet(
        {"train": [{"id": "tiny", "prompt": "Guess 1-3.", "reset": {"low": 1, "high": 3}}]}
    )
    env = environment_factory(GuessEnv, tasks=tasks)()
    # no prompt column: the task's prompt is what the model reads
    assert env.reset(task_id="tiny", seed=2) == "Guess 1-3."
    assert episode_of(env).reset_options == {"seed": 2, "low": 1, "high": 3}
    assert episode_of(env).task is not None and episode_of(env).task["id"] == "tiny"
    assert env.reset(split="train", index=0, prompt=[{"role": "user", "content": "x"}]) is None
    with pytest.raises(Exception, match="no task"):
        env.reset(task_id="huge")


def test_tool_errors_are_structured_and_recorded() -> None:
    env = environment_factory(GuessEnv)()
    env.reset(seed=1)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"n": 0}, "execution_error"),
        ({"n": "fifty"}, "invalid_args"),
        ({}, "invalid_args"),
        ({"n": 5, "extra": 1}, "invalid_args"),
        ({"n": None}, "invalid_args"),
        ({"n": [5]}, "invalid_args"),
    ]
    for arguments, kind in cases:
        with pytest.raises(ToolCallFailed) as info:
            env.guess(**arguments)
        error = json.loads(str(info.value))["error"]
        assert error["error_type"] == kind and error["message"]
    episode = episode_of(env)
    assert [c.arguments for c in episode.calls] == [a for a, _ in cases]
    assert episode.errors == len(cases)


def test_done_is_respected_and_graded() -> None:
    env = environment_factory(CalendarEnv)()
    env.reset(task_id="t4-perm-finance-write")
    result = json.loads(env.finish(status="cannot_complete", summary="no write access"))
    assert result["episodeDone"] is True
    with pytest.raises(ToolCallFailed) as info:
        env.calendarList_list()
    assert json.loads(str(info.value))["error"]["error_type"] == "episode_over"
    episode = episode_of(env)
    assert episode.done and episode.metadata["success"] is True
    assert env.get_reward() == 1.0 and episode.reward_calls == 1
    env.reset(task_id="t4-perm-finance-write")  # a fresh episode: tools work again
    assert not episode_of(env).done
    assert json.loads(env.calendarList_list())["items"]


def test_reward_rules() -> None:
    def env_for(rule: Any) -> Any:
        env = environment_factory(GuessEnv, reward=rule, reset_columns=["seed", "high"])()
        env.reset(seed=1, high=2)
        env.guess(n=1)
        env.guess(n=2) if not episode_of(env).done else None
        return env

    assert env_for("last").get_reward() == 1.0
    assert env_for("sum").get_reward() == pytest.approx(sum(episode_of(env_for("sum")).rewards))
    assert env_for(lambda ep: float(len(ep.calls))).get_reward() in (1.0, 2.0)


def test_bad_factory_arguments() -> None:
    with pytest.raises(TypeError, match="not an instance"):
        environment_factory(GuessEnv())
    with pytest.raises(TypeError, match="MCPEnvironment"):
        environment_factory(lambda: object())
    with pytest.raises(ValueError, match="no tool"):
        environment_factory(GuessEnv, tools=["guess", "nope"])
    with pytest.raises(ValueError, match="no tool"):
        environment_factory(GuessEnv, exclude_tools=["leaderboard"])  # production-only
    assert public_functions(environment_factory(GuessEnv, tools=["guess"])) == {
        "guess", "reset", "get_reward",
    }  # fmt: skip

    class Clash(MCPEnvironment):
        from mcpgym import tool

        @tool
        def get_reward(self) -> float:
            """A tool TRL would take for the reward."""
            return 1.0

    with pytest.raises(ValueError, match="reserves"):
        environment_factory(Clash)
    assert public_functions(environment_factory(Clash, exclude_tools=["get_reward"])) == {
        "reset", "get_reward",
    }  # fmt: skip


@pytest.mark.parametrize(
    "names",
    [["x-y", "x_y", "class", "1st", "self", "_p", "__", "ünï", "a.b", "return"]],
)
def test_argument_names_that_are_not_identifiers(names: list[str]) -> None:
    schema = {"type": "object", "properties": {n: {"type": "integer"} for n in names}}
    plan = MethodPlan.build("t", "T.", schema)
    params = [p for p in plan.signature.parameters if p != "self"]
    assert len(set(params)) == len(names)
    assert all(p.isidentifier() and not p.startswith("_") for p in params)
    assert sorted(plan.wire_names.values()) == sorted(names)
    compile("def f(self, *, " + ", ".join(params) + "): pass", "<sig>", "exec")


def test_docstrings_survive_hostile_descriptions() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string", "description": "line one\n  b: not an arg\nArgs:"}},
    }
    plan = MethodPlan.build("t", "Does X.\n\nReturns: Y\nArgs:\n  z: nope", schema)
    doc_lines = plan.docstring.splitlines()
    assert doc_lines[0] == "Does X. Returns - Y Args - z: nope"
    assert doc_lines[-1].startswith("    a: line one b: not an arg Args -")


@pytest.mark.server
def test_at_a_url() -> None:
    with run_server(create_app(CalendarEnv)) as server:
        adapter = environment_factory(server.url)
        assert public_functions(adapter) == public_functions(environment_factory(CalendarEnv))
        env = adapter()
        task = CALENDAR_TASKS.find_task("t4-perm-finance-write")
        env.reset(task_id=task["id"])  # the server's environment resolves the task
        assert "task" not in episode_of(env).metadata  # the reset tells no trap from its twin
        with pytest.raises(ToolCallFailed) as info:
            env.events_insert(calendarId="primary", summary="x")  # start/end missing
        error = json.loads(str(info.value))["error"]
        assert error["error_type"] and "start" in json.dumps(error)  # the calendar's own detail
        env.finish(status="cannot_complete", summary="read only")
        assert env.get_reward() == 1.0
        # the server drops the session between episodes: the next reset opens a new one
        session = env._mcpgym_session
        session.client._transport._ws.close()  # type: ignore[attr-defined]
        env.reset(task_id=task["id"])
        assert not episode_of(env).done
        with pytest.raises(RemoteError):
            env.reset(task_id="t0-nothing")


class TwoServerPool:
    """The pool interface the adapter takes (`SyncEnvPool`'s): `session()` yields a client."""

    def __init__(self, urls: list[str]) -> None:
        self.urls, self.turn, self.placed = urls, 0, list[str]()

    @contextlib.contextmanager
    def session(self, **client_options: Any) -> Iterator[SyncEnvClient[Any, Any, Any]]:
        url = self.urls[self.turn % len(self.urls)]
        self.turn += 1
        self.placed.append(url)
        with SyncEnvClient(url, **client_options) as client:
            yield client


@pytest.mark.server
def test_over_a_pool() -> None:
    with run_server(create_app(GuessEnv)) as a, run_server(create_app(GuessEnv)) as b:
        pool = TwoServerPool([a.url, b.url])
        env = environment_factory(pool, reset_columns=["seed", "high"])()
        assert public_functions(type(env)) == {"guess", "hint", "reset", "get_reward"}
        for seed in range(4):
            env.reset(seed=seed, high=3)
            for n in (1, 2, 3):
                if episode_of(env).done:
                    break
                env.guess(n=n)
            assert episode_of(env).done and env.get_reward() > 0
        assert set(pool.placed) == {a.url, b.url}  # each episode placed anew
        a.wait_for_sessions(1)  # the last episode's session is still open on one server only
        del env


def test_an_async_pool_is_refused() -> None:
    class AsyncPool:
        @contextlib.asynccontextmanager
        async def session(self, **_: Any) -> Any:
            yield None

    with pytest.raises(TypeError, match="SyncEnvPool"):
        environment_factory(AsyncPool())


@pytest.mark.server
def test_over_a_real_sync_env_pool() -> None:
    from mcpgym.pool import SyncEnvPool
    from mcpgym.providers.process import ProcessProvider

    with SyncEnvPool(ProcessProvider("calendar_gym:CalendarEnv"), size=2) as pool:
        adapter = environment_factory(pool)
        assert public_functions(adapter) == public_functions(environment_factory(CalendarEnv))
        envs = [adapter(), adapter()]
        for env in envs:  # two rollouts at once, each on its own pool session
            env.reset(task_id="t4-perm-finance-write/explicit")
        urls = {env._mcpgym_session.client.url for env in envs}
        assert len(urls) == 2  # least load: the two sessions sit on different servers
        for env in envs:
            env.finish(status="cannot_complete", summary="read only")
            assert env.get_reward() == 1.0 and episode_of(env).metadata["success"] is True
        for env in envs:
            env._mcpgym_session.close()
