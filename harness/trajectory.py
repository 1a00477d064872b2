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

Simulation episodes (a trainer driving `reset`/`step` or the TRL adapter, no capture proxy) are
labelled from the conversation itself: `label_messages` gives the same role segments for chat
messages (`system`/`user` → context, `assistant` → action, `tool` → env_output, boilerplate →
warning), `simulation_trajectory` makes a `Trajectory` of them, and `token_roles` renders the
conversation with a tokenizer's (prefix-preserving) chat template and labels every token, so
`write_token_roles` exports JSONL a trainer reads (`token_ids`, `roles`, `mask` per episode):

    >>> [(s.role, s.text) for s in label_messages([{"role": "user", "content": "Guess."},
    ...     {"role": "assistant", "content": "", "tool_calls": [{"type": "function",
    ...      "function": {"name": "guess", "arguments": {"n": 5}}}]},
    ...     {"role": "tool", "name": "guess", "content": "higher"}])]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('context', 'Guess.'), ('action', '{"name": "guess", "arguments": {"n": 5}}'),
     ('env_output', 'higher')]
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field

from mcpgym.harness.capture.records import LLMCall
from mcpgym.harness.capture.segments import Role, Segment, segment_call, split_boilerplate

__all__ = [
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
    segments: list[Segment] = Field(default_factory=list[Segment])
    """A simulation episode's conversation, labelled (`label_messages`); harness runs label
    each recorded model call instead (`llm_calls`)."""
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

    def raw(self, line: str) -> None:
        """Append one line that is not a `Trajectory` (e.g. a token-role record); caller locks."""
        self._file.write(line + "\n")
        self._file.flush()

    def lock(self) -> threading.Lock:
        """The writer's lock, for a run of `raw` lines."""
        return self._lock

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


# -- simulation episodes: trajectories from the conversation itself -----------------------------

_MESSAGE_ROLE: dict[str, Role] = {"assistant": "action", "tool": "env_output"}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):  # content blocks: their text parts
        return "".join(
            str(b.get("text", "")) for b in content if isinstance(b, Mapping) and "text" in b
        )
    return "" if content is None else str(content)


def _call_text(call: Mapping[str, Any]) -> str:
    fn = call.get("function", call)
    args = fn.get("arguments") if isinstance(fn, Mapping) else None
    if isinstance(args, str):
        with contextlib.suppress(ValueError):
            args = json.loads(args)
    name = fn.get("name") if isinstance(fn, Mapping) else None
    return json.dumps({"name": name, "arguments": args}, ensure_ascii=False)


def label_messages(messages: Sequence[Mapping[str, Any]]) -> list[Segment]:
    """Role segments of a chat conversation (Hugging Face / OpenAI message dicts), in order."""
    out: list[Segment] = []
    for i, m in enumerate(messages):
        who = str(m.get("role", ""))
        role: Role = _MESSAGE_ROLE.get(who, "context")
        source = f"messages[{i}]"
        tool = m.get("name") if who == "tool" else None
        reasoning = _text(m.get("reasoning_content"))
        if reasoning and who == "assistant":
            out.append(Segment(role=role, text=reasoning, source=source, kind="reasoning"))
        for boiler, piece in split_boilerplate(_text(m.get("content"))):
            if piece:
                kind = "tool_result" if who == "tool" else who
                bad = boiler and role != "action"  # the model's own text is never boilerplate
                out.append(
                    Segment(
                        role="warning" if bad else role,
                        text=piece,
                        source=source,
                        kind=kind,
                        tool=tool,
                    )
                )
        for j, call in enumerate(m.get("tool_calls") or []):
            fn = call.get("function", call) if isinstance(call, Mapping) else {}
            out.append(
                Segment(
                    role=role,
                    text=_call_text(call),
                    source=f"{source}.tool_calls[{j}]",
                    kind="tool_call",
                    tool=fn.get("name"),
                )
            )
    return out


def simulation_trajectory(
    episode_id: str,
    messages: Sequence[Mapping[str, Any]],
    *,
    tool_calls: Iterable[ToolCallRecord] = (),
    metadata: dict[str, Any] | None = None,
) -> Trajectory:
    """The record of a simulation episode: its conversation, labelled, and the calls it ran."""
    return Trajectory(
        episode_id=episode_id,
        harness="simulation",
        tool_calls=list(tool_calls),
        segments=label_messages(messages),
        metadata={"messages": [dict(m) for m in messages], **(metadata or {})},
    )


class TokenRoles(BaseModel):
    """A conversation as one token sequence with a role per token; `mask` is 1 on `action`."""

    text: str
    token_ids: list[int]
    roles: list[Role]

    @property
    def mask(self) -> list[int]:
        return [int(r == "action") for r in self.roles]


def token_roles(
    messages: Sequence[Mapping[str, Any]],
    tokenizer: Any,
    *,
    tools: Any = None,
    chat_template: str | None = None,
) -> TokenRoles:
    """Render `messages` with a Hugging Face tokenizer and label every token.

    Each message's span of the rendering is its delta over the rendering of the messages before
    it, so the template must be prefix-preserving (TRL's `get_training_chat_template` gives one
    for the templates it knows). In an assistant span, what follows the generation prompt up to
    the end token is `action`; in others the message's own text keeps its role (tool output,
    boilerplate) and the template's scaffolding is `context`. A token takes the role most of its
    characters have.
    """

    def render(part: Sequence[Mapping[str, Any]], prompt: bool = False) -> str:
        if not part:
            return ""
        return str(
            tokenizer.apply_chat_template(
                [dict(m) for m in part], tools=tools, tokenize=False,
                add_generation_prompt=prompt, chat_template=chat_template,
            )
        )  # fmt: skip

    chars: list[Role] = []
    text = ""
    eos = getattr(tokenizer, "eos_token", None) or ""
    for i, m in enumerate(messages):
        full = render(messages[: i + 1])
        if not full.startswith(text):
            raise ValueError(
                f"the chat template is not prefix-preserving at message {i}: pass a training "
                "template (trl.chat_template_utils.get_training_chat_template(tokenizer))"
            )
        delta = full[len(text) :]
        roles: list[Role] = ["context"] * len(delta)
        if m.get("role") == "assistant":
            head = render(messages[:i], prompt=True) if i else ""
            start = len(head) - len(text) if head.startswith(text) and full.startswith(head) else 0
            end = delta.rfind(eos) + len(eos) if eos and eos in delta[start:] else len(delta)
            roles[start:end] = ["action"] * (end - start)
        else:
            cursor = 0
            for seg in label_messages([m]):
                at = delta.find(seg.text, cursor) if seg.text else -1
                if at >= 0:
                    roles[at : at + len(seg.text)] = [seg.role] * len(seg.text)
                    cursor = at + len(seg.text)
        chars += roles
        text = full
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    token_ids = list(encoded["input_ids"])
    out: list[Role] = []
    for start, end in encoded["offset_mapping"]:
        span = chars[start:end]
        # the role most of its characters have (ties: the earlier one)
        out.append(Counter(span).most_common(1)[0][0] if span else (out[-1] if out else "context"))
    return TokenRoles(text=text, token_ids=token_ids, roles=out)


def write_token_roles(
    path: str | Path,
    episodes: Iterable[tuple[str, Sequence[Mapping[str, Any]]]],
    tokenizer: Any,
    *,
    tools: Any = None,
    chat_template: str | None = None,
) -> int:
    """Append one JSONL line per `(episode_id, messages)`: `token_ids`, `roles`, `mask` (for
    `tokenizer`). Returns how many lines were written."""
    written = 0
    with TrajectoryWriter(path) as writer, writer.lock():
        for episode_id, messages in episodes:
            labelled = token_roles(messages, tokenizer, tools=tools, chat_template=chat_template)
            line = {
                "episode_id": episode_id,
                "token_ids": labelled.token_ids,
                "roles": labelled.roles,
                "mask": labelled.mask,
            }
            writer.raw(json.dumps(line, ensure_ascii=False))
            written += 1
    return written
