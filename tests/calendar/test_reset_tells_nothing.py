"""A reset observation reaches the agent whole (the LLM agent pastes it into its first message),
so it must not tell a trap from its twin: no task id, tier or step budget, for every task of
every suite, and a trap and its twin open with the same observation but for the facts the task
itself states (user, scopes, clock)."""

from __future__ import annotations

import json

import pytest

from calendar_gym import CalendarEnv
from calendar_gym.tasks.loader import VERSIONS, load_suite

# What a task sets and an agent may legitimately see at reset (a read-only token is the fact a
# permission trap turns on: the agent is meant to find it; scopes are what the token says).
STATED = {"user", "now", "timeZone", "scopes"}


def _opening(env: CalendarEnv, task_id: str, suite: str) -> dict[str, object]:
    obs = env.reset(task=task_id, suite=suite)
    return json.loads(obs.model_dump_json())


@pytest.mark.parametrize("version", VERSIONS)
def test_no_reset_names_its_task_tier_or_budget(version: str) -> None:
    env = CalendarEnv()
    try:
        for task in load_suite(version).tasks:
            opening = _opening(env, task.id, version)
            text = json.dumps(opening)
            assert task.id not in text, (task.id, opening)
            assert env.state.task == task.id  # the operator still knows
            metadata = opening.get("metadata") or {}
            assert not {"task", "tier", "max_steps", "twin", "is_trap"} & set(metadata), opening
            words = {"trap", "twin", "perm", "ambig", "missing"}
            assert not [w for w in words if w in text.lower()], (task.id, opening)
    finally:
        env.close()


def test_a_trap_and_its_twin_open_alike() -> None:
    suite = load_suite("3")
    by_id = {t.id: t for t in suite.tasks}
    pairs = [(t, by_id[t.twin]) for t in suite.tasks if t.is_trap and t.twin]
    assert len(pairs) >= 10
    env = CalendarEnv()
    try:
        for trap, twin in pairs:
            a, b = _opening(env, trap.id, "3"), _opening(env, twin.id, "3")
            meta_a, meta_b = dict(a.pop("metadata")), dict(b.pop("metadata"))  # type: ignore[arg-type]
            assert a == b, (trap.id, twin.id)
            assert set(meta_a) == set(meta_b)
            differ = {k for k in meta_a if meta_a[k] != meta_b[k]}
            assert differ <= STATED, (trap.id, twin.id, differ)
    finally:
        env.close()


def test_the_final_observation_names_the_task_for_the_operator() -> None:
    env = CalendarEnv()
    try:
        env.reset(task="t4-perm-finance-write", suite="3")
        from mcpgym import CallToolAction

        obs = env.step(
            CallToolAction(
                tool_name="finish", arguments={"status": "cannot_complete", "summary": "no"}
            )
        )
        assert obs.done and obs.metadata["task"] == "t4-perm-finance-write"
        assert obs.metadata["tier"] == "T4"
    finally:
        env.close()
