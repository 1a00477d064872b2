"""`check_env`: passes on good environments, explains what is wrong with broken ones."""

from typing import Any

import pytest

from helpers.envs import AsyncCounter, SyncCounter
from mcpgym import Action, Environment, MCPEnvironment, Observation, State, check_env, tool
from mcpgym.checker import CHECKS, EnvCheckError
from mcpgym.examples.guess import GuessEnv

ALL_CHECKS = [c.__name__ for c in CHECKS]


class Fine(Environment[Action, Observation, State]):
    """A minimal correct plain environment; the broken ones below each change one thing."""

    def __init__(self) -> None:
        self._state = State()

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Observation:
        self._state = State(episode_id=episode_id)
        return Observation()

    def step(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        self._state.step_count += 1
        return Observation(reward=0.0)

    @property
    def state(self) -> State:
        return self._state


def failures(env: Any) -> dict[str, str]:
    with pytest.raises(EnvCheckError) as caught:
        check_env(env)
    err = caught.value
    assert isinstance(err, AssertionError)  # usable as a test assertion
    for name, message in err.failures.items():
        assert f"- {name}: {message}" in str(err)
    assert str(len(err.failures)) in str(err)
    return err.failures


@pytest.mark.parametrize(
    "env",
    [GuessEnv, GuessEnv(), Fine, SyncCounter, AsyncCounter],
    ids=["GuessEnv", "GuessEnv()", "Fine", "SyncCounter", "AsyncCounter"],
)
def test_good_environments_pass(env: Any) -> None:
    assert check_env(env) == ALL_CHECKS


def test_no_tools() -> None:
    class NoTools(MCPEnvironment):
        pass

    found = failures(NoTools)
    assert list(found) == ["check_tools"]
    assert "@tool" in found["check_tools"]


def test_reset_returning_a_dict() -> None:
    class DictReset(Fine):
        def reset(
            self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
        ) -> Any:
            return {"observation": {}}

    found = failures(DictReset)
    assert "returned dict" in found["check_reset_returns_observation"]
    assert "Observation" in found["check_reset_returns_observation"]
    # nothing after reset can run without an episode: those checks neither pass nor fail
    assert "check_state" not in found and "check_close" not in found


def test_reset_raising() -> None:
    class Raises(Fine):
        def reset(
            self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
        ) -> Observation:
            raise OSError("no disk")

    assert failures(Raises)["check_reset_returns_observation"] == "OSError: no disk"


def test_state_not_a_state() -> None:
    class DictState(Fine):
        @property
        def state(self) -> Any:
            return {"episode_id": "check-env"}

    found = failures(DictState)
    assert list(found) == ["check_state"]
    assert "state returned dict" in found["check_state"] and "State" in found["check_state"]


def test_state_ignoring_the_episode_id() -> None:
    class Forgetful(Fine):
        def reset(
            self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
        ) -> Observation:
            return super().reset(seed)

    assert "episode_id" in failures(Forgetful)["check_state"]


def test_missing_step() -> None:
    class NoStep(Environment[Action, Observation, State]):
        def reset(
            self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
        ) -> Observation:
            return Observation()

        @property
        def state(self) -> State:
            return State(episode_id="check-env")

    found = failures(NoStep)
    assert list(found) == ["check_contract_methods"]
    assert "NoStep.step() is not implemented" in found["check_contract_methods"]


def test_missing_state() -> None:
    class NoState(Environment[Action, Observation, State]):
        def reset(
            self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
        ) -> Observation:
            return Observation()

        def step(
            self, action: Action, timeout_s: float | None = None, **kwargs: Any
        ) -> Observation:
            return Observation()

    found = failures(NoState)
    assert "@property" in found["check_contract_methods"]
    assert "NotImplementedError" in found["check_state"]


def test_list_tools_not_counted_as_a_step() -> None:
    class Uncounted(GuessEnv):
        def finish_step(self, action: Action, obs: Observation) -> Observation:
            return obs

    found = failures(Uncounted)
    assert "count as a step" in found["check_tools"]


def test_unknown_tool_raising() -> None:
    class Strict(GuessEnv):
        def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Observation:
            if getattr(action, "tool_name", "") == "__no_such_tool__":
                raise KeyError(action.tool_name)
            return super().step(action, timeout_s, **kwargs)

    assert "KeyError" in failures(Strict)["check_unknown_tool_is_data"]


def test_close_raising() -> None:
    class BadClose(Fine):
        def close(self) -> None:
            raise RuntimeError("leaked")

    assert failures(BadClose) == {"check_close": "RuntimeError: leaked"}


def test_every_failure_is_reported_at_once() -> None:
    class Broken(MCPEnvironment):
        @property
        def state(self) -> Any:
            return "nope"

        def close(self) -> None:
            raise RuntimeError("leaked")

    assert set(failures(Broken)) == {"check_state", "check_tools", "check_close"}


def test_tools_with_object_schemas_pass() -> None:
    class One(MCPEnvironment):
        @tool
        def ping(self) -> str:
            return "pong"

    assert check_env(One()) == ALL_CHECKS
