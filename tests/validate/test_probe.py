"""The probe: an oracle episode the server never answered is an error, never a silent switch to
another probe (two reports of one environment must not differ with the machine's load)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from mcpgym.validate import probe
from mcpgym.validate.policies import Spec, Trajectory


def _ctx() -> Any:
    manifest = SimpleNamespace(policies=SimpleNamespace(oracle="pkg:oracle"), tools=[])
    tools = [{"name": "finish", "inputSchema": {"type": "object", "properties": {}}}]
    return SimpleNamespace(
        manifest=manifest,
        cache={"sim_tools": tools},
        load_policy=lambda name: object(),
    )


@pytest.mark.parametrize(
    "error", ["step: no reply within 15 s", "reset: connection closed", "step: [Errno 104] reset"]
)
def test_no_reply_to_the_oracle_is_an_error(monkeypatch: pytest.MonkeyPatch, error: str) -> None:
    monkeypatch.setattr(probe, "run", lambda *a, **k: Trajectory("s", error=error))
    with pytest.raises(probe.ProbeUnavailable, match="got no reply"):
        probe.probe_actions(_ctx(), Spec("s", {}))


@pytest.mark.parametrize("error", ["a step timed out", "step answered error: {}", None])
def test_an_answer_from_the_environment_keeps_the_probe(
    monkeypatch: pytest.MonkeyPatch, error: str | None
) -> None:
    done = Trajectory("s", actions=[{"type": "call_tool", "tool_name": "finish"}], error=error)
    monkeypatch.setattr(probe, "run", lambda *a, **k: done)
    actions = probe.probe_actions(_ctx(), Spec("s", {}))
    if error is None:
        assert actions == done.actions  # the oracle's own trajectory
    else:
        assert [a["tool_name"] for a in actions] == ["finish"]  # one empty call per tool


def test_a_level_3_oracle_run_is_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = _ctx()
    ctx.cache["oracle_runs"] = {"s": Trajectory("s", actions=[{"tool_name": "x"}])}
    monkeypatch.setattr(probe, "run", lambda *a, **k: pytest.fail("the oracle ran twice"))
    assert probe.probe_actions(ctx, Spec("s", {})) == [{"tool_name": "x"}]
