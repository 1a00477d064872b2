"""After `done`, a call is refused or scores 0, on every transport that carries rewards (issue 28,
defect 6): a client that sums per-call rewards must not count the end twice. One policy — play
until the environment ends the episode, then call again — on Calendar Gym (a task's gold plan;
`finish` is graded) and on an environment whose every step is worth 1 (reward hook and rubric),
over each transport of one real server:

- `/ws` steps (mcpgym's client; OpenEnv's clients read the same frames): the call runs, scores
  0.0, `done` stays true;
- `/mcp?episode=ID` (the official MCP client): refused (`isError`, "episode is over"), not run,
  and the episode's record is unchanged;
- the ORS wire (`--ors-wire`, ORS's own client `ors.client.ORS`): the call runs and shows its
  blocks, scores 0.0, `finished` stays true.

Plain MCP sessions and OpenEnv's `/mcp` dialect carry no rewards, and HTTP `/step` is stateless
(a fresh instance per request, as in OpenEnv): there is no "after done" to score on them.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from calendar_gym import CalendarEnv
from calendar_gym.tasks import get_task
from calendar_gym.tasks.values import entity_value, resolve
from helpers.compat import ORS_CLIENT, compat
from helpers.finishers import Finisher, RubricFinisher
from helpers.mcp import http_client
from helpers.server import run_server
from mcpgym import CallToolAction, SyncEnvClient
from mcpgym.servers import create_app

ors = pytest.importorskip("ors", reason="just test-ors installs ors-sdk")
pytestmark = [pytest.mark.ors, pytest.mark.server]

from ors.client import ORS  # noqa: E402
from ors.client._types import Task  # noqa: E402

TASK = get_task("t1-create-haircut", "2")
CALENDAR_PLAN = [
    (s.tool, resolve(s.args, lambda ref: entity_value(TASK, ref), {})) for s in TASK.plan
]
CALENDAR_RESET = {"task": TASK.id, "suite": "2"}
AFTER = {
    "calendar": [("calendarList_list", {}), ("finish", {})],
    "any": [("look", {}), ("end", {})],
}
CASES = [
    pytest.param(CalendarEnv, CALENDAR_RESET, CALENDAR_PLAN, AFTER["calendar"], id="calendar"),
    pytest.param(Finisher, {}, [("look", {}), ("end", {})], AFTER["any"], id="reward-hook"),
    pytest.param(RubricFinisher, {}, [("end", {})], AFTER["any"], id="rubric"),
]


def _ws(url: str, reset: dict[str, Any], plan: list[Any], after: list[Any]) -> list[Any]:
    with SyncEnvClient(url) as env:
        env.reset(**reset)
        played = [env.step(CallToolAction(tool_name=n, arguments=a)) for n, a in plan]
        late = [env.step(CallToolAction(tool_name=n, arguments=a)) for n, a in after]
    return [(s.reward, s.done) for s in played], [(s.reward, s.done) for s in late]


def _ors(url: str, name: str, reset: dict[str, Any], plan: list[Any], after: list[Any]) -> Any:
    with ORS(base_url=url) as client:
        env = client.environment(name)
        with env.session(task=Task(environment_name=name, task_spec={"reset": reset})) as session:
            played = [session.call_tool(n, a) for n, a in plan]
            late = [session.call_tool(n, a) for n, a in after]
    return [(o.reward, o.finished) for o in played], [
        (o.reward, o.finished, o.blocks) for o in late
    ]


async def _episode(url: str, reset: dict[str, Any], plan: list[Any], after: list[Any]) -> Any:
    async with httpx.AsyncClient(timeout=30) as http:
        opened = (await http.post(f"{url}/mcp/episodes", json={"reset": reset})).json()
        async with http_client(f"{url}{opened['url']}", "legacy") as client:
            for name, arguments in plan:
                assert not (await client.call_tool(name, arguments)).is_error, name
            before = (await http.get(f"{url}/mcp/episodes/{opened['episode']}")).json()
            late = [await client.call_tool(n, a) for n, a in after]
        record = (await http.get(f"{url}/mcp/episodes/{opened['episode']}")).json()
    return before, late, record


@compat(
    ORS_CLIENT,
    "ors.client.ORS over --ors-wire",
    "works",
    "after the episode ends (Calendar Gym's graded finish, any env's end), calls run and "
    "score 0.0 with finished kept, equal to mcpgym's /ws steps; /mcp episodes refuse them",
)
@pytest.mark.parametrize(("cls", "reset", "plan", "after"), CASES)
def test_after_done_every_transport_refuses_or_scores_zero(
    cls: type[Any], reset: dict[str, Any], plan: list[Any], after: list[Any]
) -> None:
    with run_server(create_app(cls, ors_wire=True)) as server:
        played, late = _ws(server.url, reset, plan, after)
        assert played[-1] == (1.0, True) and not any(done for _, done in played[:-1])
        assert late == [(0.0, True)] * len(after)  # ran, earned nothing, still done

        ors_played, ors_late = _ors(server.url, cls.__name__, reset, plan, after)
        assert ors_played == played  # the same episode, as ORS reads it
        assert [(r, f) for r, f, _ in ors_late] == [(0.0, True)] * len(after)
        assert all(blocks for _, _, blocks in ors_late)  # the call ran and shows its output

        before, refused, record = asyncio.run(_episode(server.url, reset, plan, after))
        assert before["done"] is True and before["reward"] == pytest.approx(
            sum(r or 0.0 for r, _ in played)
        )
        for result in refused:
            assert result.is_error and "episode is over" in result.content[0].text  # type: ignore[union-attr]
        assert record["calls"] == before["calls"] and record["reward"] == before["reward"]
