"""Rubrics: the base, the containers (with async children), trajectory rubrics, the framework hook
in `MCPEnvironment`, and `LLMJudge` against scripted OpenAI-compatible endpoints."""

from __future__ import annotations

import asyncio
import doctest
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

import mcpgym.rubrics as rubrics_module
from helpers.server import run_server
from mcpgym import CallToolAction, CallToolObservation, ListToolsAction, MCPEnvironment, tool
from mcpgym.errors import ExecutionError
from mcpgym.rubrics import (
    Gate,
    JudgeError,
    LLMJudge,
    Rubric,
    RubricError,
    RubricInput,
    RubricTrace,
    Sequential,
    TrajectoryRubric,
    TrajectoryStep,
    WeightedSum,
    parse_score,
    rubric,
)
from mcpgym.types import Observation


def inp(done: bool = False, **meta: Any) -> RubricInput:
    return RubricInput(action=None, observation=Observation(done=done, metadata=meta))


class Const(Rubric):
    def __init__(self, value: Any, *, name: str | None = None) -> None:
        super().__init__(name=name)
        self.value = value
        self.calls = 0

    def score(self, inp: RubricInput) -> float:
        self.calls += 1
        return self.value


class AsyncConst(Const):
    async def score(self, inp: RubricInput) -> float:  # type: ignore[override]
        self.calls += 1
        await asyncio.sleep(0)
        return self.value


def test_docstring_examples() -> None:
    result = doctest.testmod(rubrics_module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# -- the base --------------------------------------------------------------------------------------


async def test_sync_and_async_rubrics_score_both_ways() -> None:
    for r in (Const(0.25), AsyncConst(0.25), rubric(lambda i: 0.25)):
        assert await r.ascore(inp()) == 0.25
    assert Const(0.5).score_sync(inp()) == 0.5


def test_an_async_rubric_scores_synchronously_outside_a_loop() -> None:
    assert AsyncConst(0.75).score_sync(inp()) == 0.75


async def test_an_async_rubric_cannot_score_synchronously_inside_a_loop() -> None:
    with pytest.raises(RubricError, match="use astep"):
        AsyncConst(1.0).score_sync(inp())


@pytest.mark.parametrize("bad", [None, "1.0", True, float("nan"), [1.0]])
def test_a_non_number_is_a_rubric_error(bad: Any) -> None:
    with pytest.raises(RubricError, match="not a number"):
        Const(bad).score_sync(inp())


async def test_an_exception_in_score_becomes_a_rubric_error_naming_the_rubric() -> None:
    def boom(_: RubricInput) -> float:
        raise KeyError("gold")

    with pytest.raises(RubricError, match=r"rubric\(check\) raised KeyError") as info:
        await rubric(boom, name="check").ascore(inp())
    assert isinstance(info.value, ExecutionError)  # fails the session's step, nothing more


def test_named_rubrics_record_their_scores() -> None:
    r = WeightedSum([(0.5, Const(1.0, name="a")), (0.5, Const(0.0, name="b"))], name="total")
    i = inp()
    assert r.score_sync(i) == 0.5
    assert i.scores == {"a": 1.0, "b": 0.0, "total": 0.5}


# -- containers ------------------------------------------------------------------------------------


async def test_weighted_sum_scores_async_children_concurrently() -> None:
    """Each child waits for the other to start: only concurrent scoring can finish."""
    started = [asyncio.Event(), asyncio.Event()]

    def child(me: int) -> Any:
        async def score(_: RubricInput) -> float:
            started[me].set()
            await started[1 - me].wait()
            return float(me + 1)

        return score

    r = WeightedSum([(1.0, child(0)), (10.0, child(1))])
    assert await asyncio.wait_for(r.ascore(inp()), 5) == 21.0


async def test_weighted_sum_mixes_sync_and_async_children_and_negative_weights() -> None:
    r = WeightedSum([(1.0, Const(1.0)), (-0.5, AsyncConst(1.0)), (2.0, lambda i: 0.25)])
    assert await r.ascore(inp()) == 1.0
    assert await asyncio.to_thread(r.score_sync, inp()) == 1.0  # no loop in the worker thread


def test_weighted_sum_needs_parts() -> None:
    with pytest.raises(ValueError, match="at least one"):
        WeightedSum([])


@pytest.mark.parametrize(("score", "expected"), [(0.49, 0.0), (0.5, 0.5), (0.9, 0.9)])
async def test_gate_passes_scores_at_or_above_the_threshold(score: float, expected: float) -> None:
    assert await Gate(AsyncConst(score), threshold=0.5).ascore(inp()) == expected
    assert Gate(Const(score), threshold=0.5).score_sync(inp()) == expected


def test_gate_default_threshold_is_all_or_nothing() -> None:
    assert Gate(Const(0.99)).score_sync(inp()) == 0.0
    assert Gate(Const(1.0)).score_sync(inp()) == 1.0


async def test_sequential_stops_at_the_first_zero_without_scoring_later_children() -> None:
    later = AsyncConst(1.0)
    r = Sequential(AsyncConst(0.7), Gate(AsyncConst(0.4), threshold=0.5), later)
    assert await r.ascore(inp()) == 0.0
    assert later.calls == 0
    assert await asyncio.to_thread(r.score_sync, inp()) == 0.0
    assert later.calls == 0


async def test_sequential_returns_the_last_score_when_nothing_fails() -> None:
    r = Sequential(Const(0.3), AsyncConst(0.6), WeightedSum([(0.5, AsyncConst(1.0))]))
    assert await r.ascore(inp()) == 0.5
    assert await asyncio.to_thread(r.score_sync, inp()) == 0.5
    assert [type(c).__name__ for c in r.children()] == ["Const", "AsyncConst", "WeightedSum"]


async def test_a_failing_async_child_fails_the_container() -> None:
    async def broken(_: RubricInput) -> float:
        raise ValueError("judge down")

    with pytest.raises(RubricError, match="judge down"):
        await WeightedSum([(1.0, Const(1.0)), (1.0, broken)]).ascore(inp())


# -- trajectory rubrics ----------------------------------------------------------------------------


async def test_trajectory_rubric_is_intermediate_until_done_then_scores_the_whole_episode() -> None:
    seen: list[int] = []

    class Efficiency(TrajectoryRubric):
        async def score_trajectory(self, trajectory: Any) -> float:  # type: ignore[override]
            seen.append(len(trajectory))
            return 1.0 / len(trajectory)

    r = Efficiency(intermediate=-0.01)
    trace = RubricTrace()
    rewards = [await trace.ascore(r, None, None, Observation(done=i == 3)) for i in range(4)]
    assert rewards == [-0.01, -0.01, -0.01, 0.25]
    assert seen == [4]
    assert [s.reward for s in trace.steps] == rewards
    assert TrajectoryRubric.step_rewards(1.0, 2) == [1.0, 1.0]


def test_trajectory_rubric_without_a_function_must_be_subclassed() -> None:
    with pytest.raises(RubricError, match="score_trajectory"):
        TrajectoryRubric().score_sync(inp(done=True))


# -- the framework hook in MCPEnvironment ----------------------------------------------------------

needs_hook = pytest.mark.skipif(
    "rubric" not in vars(MCPEnvironment),
    reason="needs the rubric hook in sdk/mcp_env.py (see docs/rubrics.md)",
)


def solved(i: RubricInput) -> float:
    return 1.0 if i.done else 0.0


class Door(MCPEnvironment):
    """Open the door with the right code; the rubric, not the author, computes rewards."""

    blocking = False
    rubric = Sequential(
        rubric(lambda i: 0.0 if getattr(i.observation, "error", None) else 1.0, name="no_error"),
        WeightedSum(
            [(0.9, rubric(solved, name="solved")), (0.1, AsyncConst(1.0, name="style"))],
            name="total",
        ),
    )

    @tool
    def try_code(self, code: int) -> bool:
        """Try a code."""
        if code == 42:
            self.end_episode()
        return code == 42


@needs_hook
async def test_the_framework_applies_the_rubric_on_every_step_and_at_done() -> None:
    env = Door()
    await env.areset(seed=1)
    listed = await env.astep(ListToolsAction())
    wrong = await env.astep(CallToolAction(tool_name="try_code", arguments={"code": 1}))
    bad = await env.astep(CallToolAction(tool_name="try_code", arguments={"code": "x"}))
    right = await env.astep(CallToolAction(tool_name="try_code", arguments={"code": 42}))
    assert [o.reward for o in (listed, wrong, bad, right)] == [0.1, 0.1, 0.0, 1.0]
    assert right.done and not wrong.done
    assert right.metadata["rubric"] == {"no_error": 1.0, "solved": 1.0, "style": 1.0, "total": 1.0}
    assert bad.metadata["rubric"] == {"no_error": 0.0}
    assert env.state.step_count == 4


@needs_hook
def test_sync_step_applies_the_rubric_too() -> None:
    env = Door()
    env.reset()
    obs = env.step(CallToolAction(tool_name="try_code", arguments={"code": 42}))
    assert isinstance(obs, CallToolObservation) and obs.reward == 1.0 and obs.done


@needs_hook
async def test_trajectory_rubric_on_an_environment_sees_the_episode_and_reset_clears_it() -> None:
    lengths: list[int] = []

    def fewer_is_better(steps: Any) -> float:
        lengths.append(len(steps))
        assert all(isinstance(s, TrajectoryStep) for s in steps)
        return 1.0 / len(steps)

    env = Door()
    env.rubric = TrajectoryRubric(fewer_is_better)  # per-instance rubric
    for _ in range(2):
        await env.areset()
        first = await env.astep(CallToolAction(tool_name="try_code", arguments={"code": 7}))
        last = await env.astep(CallToolAction(tool_name="try_code", arguments={"code": 42}))
        assert (first.reward, last.reward) == (0.0, 0.5)
    assert lengths == [2, 2]
    assert Door.rubric is not env.rubric


@needs_hook
async def test_a_failing_rubric_is_an_execution_error_for_the_step() -> None:
    env = Door()
    env.rubric = rubric(lambda i: 1 / 0)
    await env.areset()
    with pytest.raises(ExecutionError, match="ZeroDivisionError"):
        await env.astep(ListToolsAction())


# -- LLMJudge --------------------------------------------------------------------------------------


def completion(content: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}


def mock_judge(handler: Any, **kwargs: Any) -> LLMJudge:
    options: dict[str, Any] = {"model": "judge", "base_url": "http://judge.test/v1"} | kwargs
    return LLMJudge("Grade: {result}", transport=httpx.MockTransport(handler), **options)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ('{"score": 0.8}', 0.8),
        ("0.25", 0.25),
        ("**Score**: 1", 1.0),
        ("score = 0", 0.0),
        ("The answer is good. I'd say 0.9", 0.9),
        ("no digits at all", None),
        ("between 2 and 3", None),
        ('{"score": "high"}', None),
    ],
)
def test_parse_score(answer: str, expected: float | None) -> None:
    assert parse_score(answer) == expected


async def test_judge_sends_a_chat_completion_and_scales_the_answer() -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(
            {
                "url": str(request.url),
                "auth": request.headers.get("authorization"),
                "body": json.loads(request.content),
            }
        )
        return httpx.Response(200, json=completion("Score: 7"))

    judge = mock_judge(handler, scale=(0, 10), api_key="sk-test", name="quality")
    i = RubricInput(
        action=CallToolAction(tool_name="guess", arguments={"n": 5}),
        observation=CallToolObservation(tool_name="guess", result={"verdict": "higher"}),
    )
    assert await judge.ascore(i) == pytest.approx(0.7)
    assert i.scores == {"quality": pytest.approx(0.7)}
    (call,) = seen
    assert call["url"] == "http://judge.test/v1/chat/completions"
    assert call["auth"] == "Bearer sk-test"
    body = call["body"]
    assert body["model"] == "judge" and body["temperature"] == 0.0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][1]["content"] == 'Grade: {"verdict": "higher"}'


@pytest.mark.parametrize(
    ("response", "reason"),
    [
        (httpx.Response(200, json=completion("I cannot grade this")), "malformed"),
        (httpx.Response(200, json=completion("Score: 11")), "malformed"),
        (httpx.Response(200, json={"error": "nope"}), "malformed"),
        (httpx.Response(200, text="<html>"), "malformed"),
        (httpx.Response(200, json=completion(None)), "malformed"),
        (httpx.Response(503, text="overloaded"), "http_status"),
    ],
)
async def test_judge_failures_are_clear_errors(response: httpx.Response, reason: str) -> None:
    judge = mock_judge(lambda request: response, scale=(0, 10))
    with pytest.raises(JudgeError) as info:
        await judge.ascore(inp())
    assert info.value.detail["reason"] == reason


async def test_judge_timeout_is_an_error_or_the_fallback(caplog: pytest.LogCaptureFixture) -> None:
    async def hang(request: httpx.Request) -> httpx.Response:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    with pytest.raises(JudgeError, match=r"no answer within 0\.05 s") as info:
        await mock_judge(hang, timeout=0.05).ascore(inp())
    assert info.value.detail["reason"] == "timeout"
    with caplog.at_level(logging.WARNING, logger="mcpgym.rubrics"):
        assert await mock_judge(hang, timeout=0.05, fallback=0.125).ascore(inp()) == 0.125
    assert "scoring the fallback 0.125" in caplog.text


async def test_judge_unreachable_endpoint() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with pytest.raises(JudgeError) as info:
        await mock_judge(refuse).ascore(inp())
    assert info.value.detail["reason"] == "unreachable"


async def test_judge_prompt_with_an_unknown_placeholder() -> None:
    judge = LLMJudge("{nope}", model="m", base_url="http://judge.test")
    with pytest.raises(RubricError, match="unknown placeholder"):
        await judge.ascore(inp())


def test_judge_api_key_defaults_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert LLMJudge("x", model="m", base_url="http://h/v1").api_key == "sk-env"
    monkeypatch.delenv("OPENAI_API_KEY")
    assert LLMJudge("x", model="m", base_url="http://h/v1/chat/completions").url.endswith(
        "/v1/chat/completions"
    )


# -- LLMJudge over a real socket -------------------------------------------------------------------


class ScriptedJudge:
    """An OpenAI-compatible endpoint that answers with scripted contents, recording requests."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = list(answers)
        self.requests: list[dict[str, Any]] = []

    async def completions(self, request: Request) -> Response:
        self.requests.append(await request.json())
        if not self.answers:
            return JSONResponse({"error": {"message": "script exhausted"}}, status_code=500)
        return JSONResponse(completion(self.answers.pop(0)))

    def app(self) -> Starlette:
        async def health(request: Request) -> Response:
            return JSONResponse({"status": "healthy"})

        return Starlette(
            routes=[
                Route("/v1/chat/completions", self.completions, methods=["POST"]),
                Route("/health", health),
            ]
        )


@pytest.fixture
def scripted_judge() -> Iterator[tuple[ScriptedJudge, str]]:
    judge = ScriptedJudge(['{"score": 4}', "Score: 9", "whatever"])
    with run_server(judge.app()) as server:
        yield judge, f"{server.url}/v1"


@needs_hook
@pytest.mark.server
async def test_llm_judge_over_a_real_socket_as_an_environment_rubric(
    scripted_judge: tuple[ScriptedJudge, str],
) -> None:
    script, url = scripted_judge
    env = Door()
    env.rubric = LLMJudge(
        "Tool {tool_name} returned {result}; done={done}. Rate 0-10.",
        model="grader",
        base_url=url,
        scale=(0, 10),
        timeout=10,
        fallback=0.0,
        name="judge",
    )
    await env.areset()
    first = await env.astep(CallToolAction(tool_name="try_code", arguments={"code": 1}))
    second = await env.astep(CallToolAction(tool_name="try_code", arguments={"code": 42}))
    third = await env.astep(ListToolsAction())  # "whatever" is malformed: the fallback
    assert (first.reward, second.reward, third.reward) == (0.4, 0.9, 0.0)
    assert second.metadata["rubric"] == {"judge": 0.9}
    prompts = [r["messages"][-1]["content"] for r in script.requests]
    assert prompts[:2] == [
        "Tool try_code returned false; done=False. Rate 0-10.",
        "Tool try_code returned true; done=True. Rate 0-10.",
    ]
    assert all(r["model"] == "grader" for r in script.requests)


# -- docs/rubrics.md ------------------------------------------------------------------------------


@needs_hook
def test_the_docs_examples_run() -> None:
    root = Path(__file__).resolve().parents[2]
    text = (root / "docs" / "rubrics.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 4
    namespace: dict[str, Any] = {"__name__": "docs_rubrics"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"docs/rubrics.md[{i}]", "exec"), namespace)
