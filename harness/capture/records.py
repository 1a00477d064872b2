"""What the proxy records for each model call: `LLMCall`, with normalized `Usage` and token ids.

Token ids are kept when the upstream returns them: vLLM's `"return_token_ids": true` gives
`prompt_token_ids` and `choices[].token_ids` (also streamed); `logprobs` whose tokens are written
`"token_id:123"` (vLLM's `--return-tokens-as-token-ids`) also count.

Example:
    >>> usage = usage_of("openai-chat", {"usage": {"prompt_tokens": 7, "completion_tokens": 2}})
    >>> usage.input_tokens, usage.output_tokens
    (7, 2)
    >>> token_ids_of("openai-chat", {"prompt_token_ids": [1, 2], "choices": [{"token_ids": [3]}]})
    ([1, 2], [3])
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mcpgym.harness.capture.backend import Dialect

__all__ = ["LLMCall", "Usage", "token_ids_of", "usage_of"]


class Usage(BaseModel):
    """Token counts in one vocabulary for every dialect (`input_tokens` excludes cache reads
    only where the API itself reports them apart, as Anthropic does)."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0


class LLMCall(BaseModel):
    """One model API call made by a harness through the proxy.

    `response` is the JSON body, or for a streamed call the body reassembled from its events,
    so both look alike. `error` holds the error body of a failed call (status ≥ 400, or an error
    event inside a stream). Times are seconds; `started_at` is a Unix timestamp.
    """

    model_config = ConfigDict(extra="forbid")

    key: str
    index: int
    dialect: Dialect
    path: str
    model: str = ""
    stream: bool = False
    request: dict[str, Any]
    headers: dict[str, str] = Field(default_factory=dict[str, str])
    status: int = 0
    response: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    upstream: str = "backend"
    started_at: float = 0.0
    first_byte_s: float | None = None
    duration_s: float | None = None
    usage: Usage | None = None
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None

    @property
    def done(self) -> bool:
        """Whether the call has finished (its response or error is recorded)."""
        return self.duration_s is not None


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def usage_of(dialect: Dialect, body: dict[str, Any] | None) -> Usage | None:
    """Normalized usage of a response body, or `None` when it reports none."""
    raw = (body or {}).get("usage")
    if not isinstance(raw, dict):
        return None
    if dialect == "anthropic":
        return Usage(
            input_tokens=_int(raw.get("input_tokens")),
            output_tokens=_int(raw.get("output_tokens")),
            cache_read_tokens=_int(raw.get("cache_read_input_tokens")),
            cache_write_tokens=_int(raw.get("cache_creation_input_tokens")),
        )
    prefix = "prompt" if dialect == "openai-chat" else "input"
    out_prefix = "completion" if dialect == "openai-chat" else "output"
    return Usage(
        input_tokens=_int(raw.get(f"{prefix}_tokens")),
        output_tokens=_int(raw.get(f"{out_prefix}_tokens")),
        cache_read_tokens=_int((raw.get(f"{prefix}_tokens_details") or {}).get("cached_tokens")),
        reasoning_tokens=_int(
            (raw.get(f"{out_prefix}_tokens_details") or {}).get("reasoning_tokens")
        ),
    )


def _ids(value: Any) -> list[int] | None:
    if isinstance(value, list) and all(isinstance(v, int) for v in value):
        return list(value)
    return None


def _logprob_ids(choice: dict[str, Any]) -> list[int] | None:
    content = (choice.get("logprobs") or {}).get("content") or []
    ids: list[int] = []
    for entry in content:
        token = entry.get("token", "") if isinstance(entry, dict) else ""
        if not token.startswith("token_id:"):
            return None
        ids.append(int(token.removeprefix("token_id:")))
    return ids or None


def token_ids_of(
    dialect: Dialect, body: dict[str, Any] | None
) -> tuple[list[int] | None, list[int] | None]:
    """`(prompt_token_ids, completion_token_ids)` of a response body, each `None` if absent."""
    body = body or {}
    prompt = _ids(body.get("prompt_token_ids"))
    completion = _ids(body.get("token_ids")) or _ids(body.get("completion_token_ids"))
    if dialect == "openai-chat" and completion is None:
        choices = body.get("choices") or []
        if choices and isinstance(choices[0], dict):
            completion = _ids(choices[0].get("token_ids")) or _logprob_ids(choices[0])
    return prompt, completion
