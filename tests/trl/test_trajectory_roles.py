"""Trajectories of simulation episodes: role segments from the conversation (default suite) and
per-token roles for a real tokenizer and TRL's training template, exported as JSONL (`trl`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpgym.harness.trajectory import (
    ToolCallRecord,
    Trajectory,
    label_messages,
    simulation_trajectory,
    token_roles,
    write_token_roles,
)

CALL = {"type": "function", "function": {"name": "guess", "arguments": {"n": 5}}}
MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Guess.<system-reminder>stay on task</system-reminder>"},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {"role": "tool", "name": "guess", "content": '{"verdict": "higher"}'},
    {"role": "assistant", "content": "It is higher than 5."},
]


def test_conversation_segments() -> None:
    segs = [(s.role, s.kind, s.text) for s in label_messages(MESSAGES)]
    assert segs == [
        ("context", "system", "Be brief."),
        ("context", "user", "Guess."),
        ("warning", "user", "<system-reminder>stay on task</system-reminder>"),
        ("action", "tool_call", '{"name": "guess", "arguments": {"n": 5}}'),
        ("env_output", "tool_result", '{"verdict": "higher"}'),
        ("action", "assistant", "It is higher than 5."),
    ]
    call = {"function": {"name": "f", "arguments": '{"a": 1}'}}
    blocks = [{"type": "text", "text": "a"}, {"type": "image"}]
    odd = label_messages(
        [
            {"role": "assistant", "tool_calls": [call], "content": None},
            {"role": "user", "content": blocks},
        ]
    )
    assert [(s.role, s.text) for s in odd] == [
        ("action", '{"name": "f", "arguments": {"a": 1}}'), ("context", "a"),
    ]  # fmt: skip


def test_simulation_trajectory_round_trips() -> None:
    traj = simulation_trajectory(
        "ep-1", MESSAGES, tool_calls=[ToolCallRecord(name="guess", arguments={"n": 5})]
    )
    assert traj.harness == "simulation" and traj.segments and traj.llm_calls == []
    assert Trajectory.model_validate_json(traj.model_dump_json()) == traj


@pytest.mark.trl
def test_token_roles_for_a_tokenizer(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    from trl.chat_template_utils import get_training_chat_template

    from mcpgym.integrations import trl_tiny as tiny

    tok = tiny.tokenizer([MESSAGES], None)
    with pytest.raises(ValueError, match="prefix-preserving"):
        token_roles(MESSAGES, tok)  # Qwen3's own template moves the thinking block
    template = get_training_chat_template(tok)
    labelled = token_roles(MESSAGES, tok, chat_template=template)
    assert len(labelled.token_ids) == len(labelled.roles) == len(labelled.mask)

    def text_of(role: str) -> str:
        ids = [t for t, r in zip(labelled.token_ids, labelled.roles, strict=True) if r == role]
        return str(tok.decode(ids))

    action = text_of("action")
    assert '"name": "guess"' in action and "It is higher than 5." in action
    assert action.count("<|im_end|>") == 2  # the end of each turn is the model's too
    assert "Guess." not in action and "verdict" not in action
    assert text_of("env_output").strip() == '{"verdict": "higher"}'
    # a token straddling two roles takes the one most of its characters have
    assert "stay on task</system-reminder>" in text_of("warning")
    assert "Guess" not in text_of("warning")
    assert "Be brief." in text_of("context") and "<|im_start|>" in text_of("context")
    assert tok.decode(labelled.token_ids) == labelled.text

    out = tmp_path / "roles.jsonl"
    assert (
        write_token_roles(out, [("a", MESSAGES), ("b", MESSAGES[:3])], tok, chat_template=template)
        == 2
    )
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [x["episode_id"] for x in lines] == ["a", "b"]
    assert lines[0]["token_ids"] == labelled.token_ids and lines[0]["roles"] == labelled.roles
    assert lines[1]["mask"] == [int(r == "action") for r in lines[1]["roles"]]
