"""Segmentation rules and the trajectory record, on small hand-made calls."""

from __future__ import annotations

import doctest
import importlib
import re
from pathlib import Path
from typing import Any

import pytest

import mcpgym.harness.capture as capture
import mcpgym.harness.trajectory as trajectory
from mcpgym.harness.capture import LLMCall
from mcpgym.harness.capture.segments import split_boilerplate
from mcpgym.harness.trajectory import (
    Trajectory,
    TrajectoryWriter,
    Turn,
    build_trajectory,
    read_trajectories,
    segment_call,
)

ROOT = Path(__file__).resolve().parents[2]


def chat_call(messages: list[dict[str, Any]], answer: str = "ok", **extra: Any) -> LLMCall:
    return LLMCall(
        key="k",
        index=0,
        dialect="openai-chat",
        path="/v1/chat/completions",
        request={"messages": messages},
        duration_s=0.1,
        response={"choices": [{"message": {"role": "assistant", "content": answer}}]},
        **extra,
    )


def test_split_boilerplate_keeps_every_character() -> None:
    text = "a<system-reminder>x</system-reminder>\n\nb<system-reminder>y</system-reminder>"
    pieces = split_boilerplate(text)
    assert "".join(p for _, p in pieces) == text
    assert [flag for flag, _ in pieces] == [False, True, False, True]
    assert split_boilerplate("plain") == [(False, "plain")]
    assert split_boilerplate("") == []


def test_tool_results_are_env_output_with_the_tool_named() -> None:
    call = chat_call(
        [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "env_guess", "arguments": "{}"},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": "Wall time: 0.1 seconds\nOutput:\n"
                "higher<system-reminder>r</system-reminder>",
            },
        ]
    )
    got = [(s.role, s.kind, s.tool, s.text) for s in segment_call(call)]
    assert got == [
        ("context", "user", None, "go"),
        ("context", "tool_call", "env_guess", '{"name": "env_guess", "arguments": {}}'),
        ("warning", "tool_result", "env_guess", "Wall time: 0.1 seconds\nOutput:\n"),
        ("env_output", "tool_result", "env_guess", "higher"),
        ("warning", "tool_result", "env_guess", "<system-reminder>r</system-reminder>"),
        ("action", "assistant", None, "ok"),
    ]


def test_the_models_output_is_never_boilerplate() -> None:
    call = chat_call(
        [{"role": "user", "content": "hi"}], answer="<system-reminder>mine</system-reminder>"
    )
    assert segment_call(call)[-1].role == "action"


def test_segment_call_accepts_the_stored_dict_form() -> None:
    call = chat_call([{"role": "user", "content": "hi"}])
    assert segment_call(call.model_dump()) == segment_call(call)
    assert segment_call(call.model_dump(), "openai-chat") == segment_call(call)


def test_token_mask_needs_both_sides() -> None:
    full = build_trajectory(
        "e", calls=[chat_call([], prompt_token_ids=[1], completion_token_ids=[2, 3])]
    )
    assert full.llm_calls[0].token_ids == [1, 2, 3] and full.llm_calls[0].mask == [0, 1, 1]
    half = build_trajectory("e", calls=[chat_call([], prompt_token_ids=[1])])
    assert half.llm_calls[0].mask is None


def test_calls_in_flight_are_left_out() -> None:
    running = chat_call([]).model_copy(update={"duration_s": None})
    assert build_trajectory("e", calls=[running, chat_call([])]).llm_calls[0].call.done


def test_record_round_trip_with_turns_and_tool_calls(tmp_path: Path) -> None:
    traj = build_trajectory(
        "e1",
        harness="codex",
        turns=[
            Turn(
                index=0,
                message="Guess.",
                events=[{"type": "text", "text": "50"}],
                response="50",
                started_at=1.0,
                duration_s=2.0,
            )
        ],
        tool_calls=[
            trajectory.ToolCallRecord(
                turn=0, name="guess", arguments={"n": 50}, result={"verdict": "correct"}
            )
        ],
        calls=[chat_call([{"role": "user", "content": "Guess."}])],
        metadata={"seed": 1},
    )
    path = tmp_path / "deep" / "t.jsonl"
    with TrajectoryWriter(path) as writer:
        writer.write(traj)
    with TrajectoryWriter(path) as writer:  # appends
        writer.write(traj)
    assert list(read_trajectories(path)) == [traj, traj]
    assert Trajectory.model_json_schema()["title"] == "Trajectory"


def test_reader_names_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(build_trajectory("e").model_dump_json() + "\n\n{oops\n")
    with pytest.raises(ValueError, match=r"t\.jsonl:3"):
        list(read_trajectories(path))


# --- public names, docstring examples, docs ---------------------------------------------------


def test_exported_names() -> None:
    assert capture.__all__ == [
        "DIALECTS",
        "SSE",
        "Backend",
        "BackendError",
        "CallListener",
        "CallStore",
        "CaptureProxy",
        "Conversation",
        "Dialect",
        "LLMCall",
        "Message",
        "ModelRequest",
        "Part",
        "Reassembler",
        "Reply",
        "SSEParser",
        "Segment",
        "ToolView",
        "UnknownKeyError",
        "Upstream",
        "Usage",
        "error_body",
        "parse_request",
        "parse_response",
        "reassembler_for",
        "segment_call",
        "token_ids_of",
        "usage_of",
    ]
    assert trajectory.__all__ == [
        "LabelledCall",
        "Role",
        "Segment",
        "TokenRoles",
        "ToolCallRecord",
        "Trajectory",
        "TrajectoryWriter",
        "Turn",
        "build_trajectory",
        "label_call",
        "label_messages",
        "read_trajectories",
        "segment_call",
        "simulation_trajectory",
        "token_roles",
        "write_token_roles",
    ]
    for module in (capture, trajectory):
        assert all(getattr(module, name, None) is not None for name in module.__all__)


MODULES = ["mcpgym.harness.trajectory"] + [
    f"mcpgym.harness.capture.{p.stem}"
    for p in sorted((ROOT / "harness" / "capture").glob("*.py"))
    if p.stem != "__init__"
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_docs_examples_run() -> None:
    text = (ROOT / "docs" / "capture.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "docs/capture.md has runnable examples"
    for i, block in enumerate(blocks):
        exec(compile(block, f"docs/capture.md[{i}]", "exec"), {"__name__": "docs"})
