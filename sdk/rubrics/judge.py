"""`LLMJudge`: a model behind an OpenAI-compatible chat-completions endpoint grades a step.

Re-exported by `mcpgym.rubrics`; see that module for how rubrics are applied.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import string
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcpgym.rubrics.base import Rubric, RubricError, RubricInput

if TYPE_CHECKING:  # httpx (and the rich it pulls in) loads at the first judged step, not at
    import httpx  # start-up: every server imports this module, few ever call a judge

__all__ = ["DEFAULT_JUDGE_SYSTEM", "JudgeError", "LLMJudge", "parse_score"]

log = logging.getLogger("mcpgym.rubrics")


class JudgeError(RubricError):
    """An `LLMJudge` got no usable score; `detail["reason"]` is `timeout`, `unreachable`,
    `http_status` or `malformed`."""


DEFAULT_JUDGE_SYSTEM = (
    'You are a strict grader. Answer with a JSON object {"score": <number>} and nothing else.'
)

_SCORE_RE = re.compile(r"score\W{0,3}(-?\d+(?:\.\d+)?)", re.IGNORECASE)
_NUMBER_RE = re.compile(r"-?\d+(?:\.\d+)?")


def parse_score(text: str) -> float | None:
    """The score in a judge's answer, or `None` when it holds no unambiguous number.

    Accepted, in order: JSON `{"score": x}` or a bare JSON number; `score: x` (also `Score = x`,
    `**Score**: x`); a text containing exactly one number.

    Example:
        >>> parse_score('{"score": 0.8}'), parse_score("Score: 7"), parse_score("I give it 3.")
        (0.8, 7.0, 3.0)
        >>> parse_score("between 3 and 4") is None
        True
    """
    text = text.strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        data = data.get("score")
    if isinstance(data, int | float) and not isinstance(data, bool):
        return float(data)
    if m := _SCORE_RE.search(text):
        return float(m.group(1))
    numbers = _NUMBER_RE.findall(text)
    return float(numbers[0]) if len(numbers) == 1 else None


class LLMJudge(Rubric):
    """A model grades the step through an OpenAI-compatible `POST {base_url}/chat/completions`.

    The prompt is a `str.format` template (double literal braces) over: `action`, `observation`,
    `result`, `error`, `tool_name`, `done` (JSON or plain values of the step), `trajectory` (the
    episode's steps as JSON), `state` (the environment's state as JSON), plus whatever `render`
    returns. The answer is read with `parse_score`, must lie within `scale`, and is mapped to
    [0, 1] (`scale=(0, 10)` turns 7 into 0.7).

    Failures (timeout, connection, HTTP status, malformed answer, score out of range) raise
    `JudgeError`, or, when `fallback` is set, log a warning and score `fallback` instead.

    Args:
        prompt: the user-message template.
        model: the model name sent in each request.
        base_url: the endpoint, e.g. `http://127.0.0.1:8000/v1`.
        api_key: sent as a bearer token; default `$OPENAI_API_KEY` (none when unset).
        timeout: seconds for the whole request.
        transport: an `httpx.AsyncBaseTransport` (tests use `httpx.MockTransport`).

    Example:
        >>> judge = LLMJudge("Did the tool succeed? {result}", model="m",
        ...                  base_url="http://127.0.0.1:9/v1", fallback=0.0)
        >>> judge.template_fields()
        ['result']
    """

    def __init__(
        self,
        prompt: str,
        *,
        model: str,
        base_url: str,
        api_key: str | None = None,
        system: str | None = DEFAULT_JUDGE_SYSTEM,
        scale: tuple[float, float] = (0.0, 1.0),
        timeout: float = 30.0,
        fallback: float | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        render: Callable[[RubricInput], dict[str, Any]] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(name=name)
        if scale[1] <= scale[0]:
            raise ValueError(f"scale must be (low, high) with low < high, got {scale}")
        self.prompt, self.model, self.system = prompt, model, system
        url = base_url.rstrip("/")
        self.url = url if url.endswith("/chat/completions") else f"{url}/chat/completions"
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.scale, self.timeout, self.fallback = scale, timeout, fallback
        self.temperature, self.max_tokens = temperature, max_tokens
        self.render, self.transport = render, transport

    def template_fields(self) -> list[str]:
        """The placeholders the prompt uses."""
        return [f for _, f, _, _ in string.Formatter().parse(self.prompt) if f]

    def variables(self, inp: RubricInput) -> dict[str, Any]:
        """The values the prompt template may use (see the class docstring)."""
        obs = inp.observation
        state = getattr(inp.env, "state", None)
        out: dict[str, Any] = {
            "action": _json(inp.action),
            "observation": _json(obs),
            "result": _json(getattr(obs, "result", None)),
            "error": _json(getattr(obs, "error", None)),
            "tool_name": getattr(obs, "tool_name", "") or "",
            "done": obs.done,
            "trajectory": _json(
                [{"action": s.action, "observation": s.observation} for s in inp.trajectory]
            ),
            "state": _json(state),
        }
        if self.render is not None:
            out.update(self.render(inp))
        return out

    def messages(self, inp: RubricInput) -> list[dict[str, str]]:
        """The chat messages sent for `inp`."""
        try:
            user = self.prompt.format_map(self.variables(inp))
        except (KeyError, IndexError) as exc:
            raise RubricError(f"LLMJudge prompt has an unknown placeholder: {exc}") from None
        system = [{"role": "system", "content": self.system}] if self.system else []
        return [*system, {"role": "user", "content": user}]

    async def score(self, inp: RubricInput) -> float:
        try:
            return self._scale(await self._ask(self.messages(inp)))
        except JudgeError as err:
            if self.fallback is None:
                raise
            log.warning("%r: %s; scoring the fallback %s", self, err.message, self.fallback)
            return self.fallback

    async def _ask(self, messages: list[dict[str, str]]) -> str:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
        }
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        import httpx

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            async with (
                asyncio.timeout(self.timeout),
                httpx.AsyncClient(transport=self.transport, timeout=self.timeout) as client,
            ):
                response = await client.post(self.url, json=body, headers=headers)
        except (TimeoutError, httpx.TimeoutException):
            raise self._error("timeout", f"no answer within {self.timeout} s") from None
        except httpx.HTTPError as exc:
            raise self._error("unreachable", f"{type(exc).__name__}: {exc}") from None
        if response.status_code != 200:
            raise self._error(
                "http_status",
                f"HTTP {response.status_code}: {response.text[:200]}",
                status=response.status_code,
            )
        try:
            content = response.json()["choices"][0]["message"]["content"]
            assert isinstance(content, str)
        except (ValueError, KeyError, IndexError, TypeError, AssertionError):
            raise self._error(
                "malformed", f"not a chat completion: {response.text[:200]}"
            ) from None
        return content

    def _scale(self, content: str) -> float:
        value = parse_score(content)
        low, high = self.scale
        if value is None or not low <= value <= high:
            raise self._error(
                "malformed",
                f"no score in [{low}, {high}] in answer {content[:200]!r}",
                answer=content[:1000],
            )
        return (value - low) / (high - low)

    def _error(self, reason: str, message: str, **detail: Any) -> JudgeError:
        return JudgeError(f"{self!r}: {message}", reason=reason, rubric=repr(self), **detail)

    def __repr__(self) -> str:
        return f"LLMJudge({self.name or self.model!r})"


def _json(value: Any) -> str:
    def default(o: Any) -> Any:
        dump = getattr(o, "model_dump", None)
        return dump(mode="json") if callable(dump) else repr(o)

    if isinstance(value, str):
        return value
    return json.dumps(value, default=default, ensure_ascii=False, sort_keys=True)
