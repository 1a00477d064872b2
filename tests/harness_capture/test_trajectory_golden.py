"""Role segmentation on calls recorded from the real CLIs (fixtures/): the golden segment lists,
plus the facts each harness's segmentation must get right."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capture_fixtures import golden_path, load_calls, summarise
from mcpgym.harness.capture import LLMCall, parse_request, parse_response
from mcpgym.harness.trajectory import (
    Segment,
    TrajectoryWriter,
    build_trajectory,
    read_trajectories,
    segment_call,
)
from scripted_model.clis import CLIS, Cli


@pytest.mark.parametrize("cli", CLIS)
def test_segments_match_the_golden_list(cli: Cli) -> None:
    golden = json.loads(golden_path(cli).read_text(encoding="utf-8"))
    assert [summarise(c) for c in load_calls(cli)] == golden


@pytest.mark.parametrize("cli", CLIS)
def test_fixture_holds_no_secret(cli: Cli) -> None:
    text = Path(golden_path(cli)).with_name(f"{cli}_tool.json").read_text(encoding="utf-8")
    assert "mcpgym-" not in text, "episode keys are scrubbed"
    assert "/tmp/pytest-of" not in text, "temporary paths are scrubbed"


def _main_calls(cli: Cli) -> list[LLMCall]:
    """The calls that carry the conversation (OpenCode adds a title call without tools)."""
    return [c for c in load_calls(cli) if parse_request(c.dialect, c.request).tools]


@pytest.mark.parametrize("cli", CLIS)
def test_parts_are_covered_exactly(cli: Cli) -> None:
    """Within each part, the segments concatenate back to the part's text."""
    for call in load_calls(cli):
        by_source: dict[str, str] = {}
        for segment in segment_call(call, call.dialect):
            by_source[segment.source] = by_source.get(segment.source, "") + segment.text
        conv = parse_request(call.dialect, call.request)
        for part in [*conv.system, *(p for m in conv.messages for p in m.parts)]:
            if part.kind in ("text", "tool_result") and part.text:
                assert by_source[f"request.{part.source}"] == part.text


@pytest.mark.parametrize("cli", CLIS)
def test_actions_are_exactly_the_response(cli: Cli) -> None:
    for call in load_calls(cli):
        segments = segment_call(call, call.dialect)
        actions = [s for s in segments if s.role == "action"]
        assert actions and all(s.source.startswith("response.") for s in actions)
        assert all(s.role == "action" for s in segments if s.source.startswith("response."))
        answer = parse_response(call.dialect, call.response)
        assert len(actions) == len(answer.parts)


@pytest.mark.parametrize("cli", CLIS)
def test_tool_round_trip_roles(cli: Cli) -> None:
    first, second = _main_calls(cli)
    (call_segment,) = [s for s in segment_call(first) if s.role == "action"]
    assert call_segment.kind == "tool_call" and call_segment.tool is not None
    assert call_segment.tool.endswith("guess")
    assert json.loads(call_segment.text)["arguments"] == {"n": 50}
    env = [s for s in segment_call(second) if s.role == "env_output"]
    assert [json.loads(s.text)["guesses"] for s in env] == [1], "one tool result, verbatim"
    assert env[0].tool == call_segment.tool
    context = [s for s in segment_call(second) if s.role == "context"]
    assert any(s.kind == "tool_call" and s.tool == call_segment.tool for s in context), (
        "the first turn's call is context in the second"
    )
    assert any(s.kind == "tool_spec" for s in context)
    assert any("Guess the number." in s.text for s in context if s.kind == "user")


def _warnings(segments: list[Segment]) -> list[str]:
    return [s.text for s in segments if s.role == "warning"]


def test_claude_code_reminders_are_warnings() -> None:
    _, second = _main_calls("claude")
    segments = segment_call(second)
    warnings = _warnings(segments)
    assert warnings and all("<system-reminder>" in w for w in warnings)
    (result_warning,) = [s for s in segments if s.role == "warning" and s.kind == "tool_result"]
    assert result_warning.text.strip().startswith("<system-reminder>")
    in_messages = [s for s in segments if s.kind not in ("system", "tool_spec")]  # these cite it
    assert not any("<system-reminder>" in s.text for s in in_messages if s.role != "warning")


def test_codex_wrappers_are_warnings() -> None:
    _, second = _main_calls("codex")
    segments = segment_call(second)
    (wrapper,) = [s for s in segments if s.role == "warning" and s.kind == "tool_result"]
    assert wrapper.text.startswith("Wall time:") and wrapper.text.endswith("Output:\n")
    warnings = _warnings(segments)
    assert any(w.startswith("<environment_context>") for w in warnings)
    assert any(w.startswith("<permissions instructions>") for w in warnings)


def test_opencode_tool_output_is_plain() -> None:
    title, _, second = load_calls("opencode")
    assert not parse_request(title.dialect, title.request).tools, "the title side call"
    assert _warnings(segment_call(second)) == []


def test_trajectory_of_a_recorded_episode_round_trips(tmp_path: Path) -> None:
    calls = load_calls("claude")
    trajectory = build_trajectory("ep-1", harness="claude-code", calls=calls)
    path = tmp_path / "trajectories.jsonl"
    with TrajectoryWriter(path) as writer:
        writer.write(trajectory)
        writer.write(trajectory.model_copy(update={"episode_id": "ep-2"}))
    first, second = read_trajectories(path)
    assert first == trajectory and second.episode_id == "ep-2"
    assert path.read_text(encoding="utf-8").count("\n") == 2
    assert [c.call.index for c in first.llm_calls] == [0, 1]
    assert first.llm_calls[1].text_of("action") == "I guessed 50."
    assert first.llm_calls[1].mask is None, "no token ids from this upstream"
