"""Trajectories: one JSONL record per harness episode — its turns, the tool calls the environment
ran, and every model call the capture proxy recorded, each labelled into role segments
(`context`, `action`, `env_output`, `warning`; see `mcpgym.harness.capture.segments`) with a token
mask when the upstream returned token ids.

Example:
    >>> from mcpgym.harness.capture import LLMCall
    >>> call = LLMCall(key="k", index=0, dialect="openai-chat", path="/v1/chat/completions",
    ...     request={"messages": [{"role": "user", "content": "hi"}]},
    ...     response={"choices": [{"message": {"role": "assistant", "content": "hello"}}]},
    ...     prompt_token_ids=[1, 2], completion_token_ids=[3], duration_s=0.1)
    >>> traj = build_trajectory("ep-1", harness="opencode", calls=[call],
    ...     turns=[Turn(index=0, message="hi", response="hello")])
    >>> [(s.role, s.text) for s in traj.llm_calls[0].segments]
    [('context', 'hi'), ('action', 'hello')]
    >>> traj.llm_calls[0].mask
    [0, 0, 1]
    >>> Trajectory.model_validate_json(traj.model_dump_json()) == traj
    True
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field

from mcpgym.harness.capture.records import LLMCall
from mcpgym.harness.capture.segments import Role, Segment, segment_call

__all__ = [
    "LabelledCall",
    "Role",
    "Segment",
    "ToolCallRecord",
    "Trajectory",
    "TrajectoryWriter",
    "Turn",
    "build_trajectory",
    "label_call",
    "read_trajectories",
    "segment_call",
]

SCHEMA_VERSION = 1


class Turn(BaseModel):
    """One conversational turn: the user message in, the harness's events out (as the adapter
    reported them: `tool_call`, `tool_result`, `text`, `llm_request`, `llm_response`, `error`,
    `turn_complete`, ...), the final response text."""

    index: int
    message: str
    events: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    response: str | None = None
    started_at: float | None = None
    duration_s: float | None = None


class ToolCallRecord(BaseModel):
    """A tool call as the environment executed it."""

    turn: int | None = None
    name: str
    arguments: Any = None
    result: Any = None
    error: Any = None


class LabelledCall(BaseModel):
    """A recorded model call with its role segments and, when token ids came back, the flat
    token sequence (`prompt + completion`) and its mask (1 for action tokens, 0 otherwise)."""

    call: LLMCall
    segments: list[Segment]
    token_ids: list[int] | None = None
    mask: list[int] | None = None

    def text_of(self, role: Role) -> str:
        """Every segment of `role`, concatenated in order."""
        return "".join(s.text for s in self.segments if s.role == role)


class Trajectory(BaseModel):
    """One episode. `llm_calls` are in the order the harness made them."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    episode_id: str
    harness: str = ""
    turns: list[Turn] = Field(default_factory=list[Turn])
    tool_calls: list[ToolCallRecord] = Field(default_factory=list[ToolCallRecord])
    llm_calls: list[LabelledCall] = Field(default_factory=list[LabelledCall])
    metadata: dict[str, Any] = Field(default_factory=dict[str, Any])


def label_call(call: LLMCall) -> LabelledCall:
    """Segment one call and build its token mask (when the call has token ids)."""
    token_ids = mask = None
    if call.prompt_token_ids is not None and call.completion_token_ids is not None:
        token_ids = call.prompt_token_ids + call.completion_token_ids
        mask = [0] * len(call.prompt_token_ids) + [1] * len(call.completion_token_ids)
    return LabelledCall(call=call, segments=segment_call(call), token_ids=token_ids, mask=mask)


def build_trajectory(
    episode_id: str,
    *,
    harness: str = "",
    turns: Iterable[Turn] = (),
    tool_calls: Iterable[ToolCallRecord] = (),
    calls: Iterable[LLMCall] = (),
    metadata: dict[str, Any] | None = None,
) -> Trajectory:
    """Assemble an episode's record, labelling every finished call (calls still in flight are
    skipped: they have no response to label)."""
    return Trajectory(
        episode_id=episode_id,
        harness=harness,
        turns=list(turns),
        tool_calls=list(tool_calls),
        llm_calls=[label_call(c) for c in calls if c.done],
        metadata=dict(metadata or {}),
    )


class TrajectoryWriter:
    """Append trajectories to a JSONL file, one line each, flushed per record (thread-safe).

    with TrajectoryWriter("runs/trajectories.jsonl") as writer:
        writer.write(trajectory)
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("a", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, trajectory: Trajectory) -> None:
        line = trajectory.model_dump_json() + "\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def read_trajectories(path: str | Path) -> Iterator[Trajectory]:
    """The trajectories of a JSONL file, in order (blank lines are skipped)."""
    with Path(path).open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if line.strip():
                try:
                    yield Trajectory.model_validate_json(line)
                except ValueError as exc:
                    raise ValueError(f"{path}:{number}: not a trajectory record: {exc}") from exc
