"""`LLMAgent`: a tool-calling loop against any OpenAI-compatible chat-completions endpoint
(vLLM, Ollama, llama.cpp, an API).

Each episode is one conversation: a system message, the spec's prompt (with the reset
observation when it carries anything), then the model's tool calls, each answered with a `tool`
message holding the tool's result or structured error. The environment's tools become OpenAI
function tools (names outside `[A-Za-z0-9_-]{1,64}` are mapped and mapped back); the messages
are shaped so every mainstream server accepts them (`mcpgym.harness.llm.messages`).

A malformed call from the model — arguments that are not a JSON object, a function that does
not exist — is answered with an error message in the conversation instead of reaching the
environment, and the model is asked again (`max_malformed` answers in a row at most; then the
episode ends with done reason `malformed`, not as if the model had chosen to stop). Several tool
calls in one answer are played one per step, in order. A plain text answer ends the episode
(`agent_stopped`); so does the environment's `done`.

Every model answer is recorded (`model_turns`, one entry per request: its finish reason, text,
tool calls, the rejected ones with the reason, token usage), and the eval runner writes them
into `episodes.jsonl` and counts the malformed calls in the summary and the report.

Example:
    >>> agent = LLMAgent("http://127.0.0.1:8000/v1", "qwen3", temperature=0.2, timeout=30)
    >>> agent.url, agent.sampling
    ('http://127.0.0.1:8000/v1/chat/completions', {'temperature': 0.2})
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Collection, Mapping
from typing import Any

import httpx

from mcpgym.harness.episodes import AgentAction, EpisodeSpec
from mcpgym.harness.llm.messages import (
    assistant_message,
    openai_tools,
    parse_arguments,
    tool_content,
)
from mcpgym.types import Observation, StepResult, ToolInfo

__all__ = [
    "DEFAULT_MODEL_TIMEOUT",
    "DEFAULT_SYSTEM_PROMPT",
    "LLMAgent",
    "ModelError",
    "openai_tools",
]

DEFAULT_SYSTEM_PROMPT = (
    "You are an agent operating tools to complete a task. Call tools to act; read each result. "
    "When the task is complete, answer in plain text without calling a tool."
)

DEFAULT_MODEL_TIMEOUT = 300.0
"""Seconds one model request may take. Generous on purpose: a CPU model reading a long tool
list for the first time takes minutes."""

_TEXT_LIMIT = 4000  # characters of a model answer's text kept in the record


class ModelError(RuntimeError):
    """The model endpoint failed (HTTP error, timeout, not a chat completion)."""


class LLMAgent:
    """An agent backed by a chat-completions model with tool calling.

    Args:
        model_url: the endpoint's base URL, e.g. `http://127.0.0.1:8000/v1` (or the full
            `.../chat/completions` URL).
        model: the model name sent in each request.
        api_key: bearer token; default `$OPENAI_API_KEY` (none when unset).
        system: the system message.
        temperature: sampling temperature (default 0.0: greedy, reproducible where the server
            is).
        max_tokens: the most tokens per answer (default: the server's).
        sampling: further request fields sent as they are (`top_p`, `seed`, `stop`, …).
        timeout: seconds for one model request (default `DEFAULT_MODEL_TIMEOUT`).
        max_malformed: consecutive malformed answers tolerated before the episode stops.
        compact_tools: present compact tool schemas (first-sentence descriptions, no titles or
            examples); the environment still accepts exactly the same calls.
        tools: present only these tool names (default all; a spec's `data["tools"]` narrows it
            per episode).
        transport: an `httpx.AsyncBaseTransport` (for tests).
    """

    def __init__(
        self,
        model_url: str,
        model: str,
        *,
        api_key: str | None = None,
        system: str = DEFAULT_SYSTEM_PROMPT,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        sampling: Mapping[str, Any] | None = None,
        timeout: float = DEFAULT_MODEL_TIMEOUT,
        max_malformed: int = 3,
        compact_tools: bool = False,
        tools: Collection[str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        name: str = "llm",
    ) -> None:
        if timeout <= 0 or timeout != timeout:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout}")
        if max_malformed < 1:
            raise ValueError(f"max_malformed must be >= 1, got {max_malformed}")
        url = model_url.rstrip("/")
        self.url = url if url.endswith("/chat/completions") else f"{url}/chat/completions"
        self.model, self.system, self.name = model, system, name
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.sampling: dict[str, Any] = {}
        if temperature is not None:
            self.sampling["temperature"] = temperature
        if max_tokens is not None:
            self.sampling["max_tokens"] = max_tokens
        self.sampling.update(sampling or {})
        self.timeout, self.max_malformed = timeout, max_malformed
        self.compact_tools = compact_tools
        self.tool_names = frozenset(tools) if tools is not None else None
        self.transport = transport

    def start(self, spec: EpisodeSpec, tools: list[ToolInfo]) -> LLMEpisode:
        return LLMEpisode(self, spec, tools)


def _presented(agent: LLMAgent, spec: EpisodeSpec, tools: list[ToolInfo]) -> list[ToolInfo]:
    wanted = agent.tool_names
    per_task = spec.data.get("tools")
    if isinstance(per_task, list | tuple) and per_task:
        names = {str(n) for n in per_task}
        wanted = names if wanted is None else wanted & names
    return tools if wanted is None else [t for t in tools if t.name in wanted]


class LLMEpisode:
    """One conversation. `model_turns` records every model answer; `stop_reason` says why the
    agent stopped when it was not the model's choice (`"malformed"`)."""

    def __init__(self, agent: LLMAgent, spec: EpisodeSpec, tools: list[ToolInfo]) -> None:
        self.agent, self.spec = agent, spec
        shown = _presented(agent, spec, tools)
        self.tools = openai_tools(shown, compact=agent.compact_tools)
        self.names = {
            t["function"]["name"]: tool.name for t, tool in zip(self.tools, shown, strict=True)
        }
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": agent.system}]
        self.queue: list[tuple[str, str, dict[str, Any]]] = []  # (call id, tool, arguments)
        self.pending: str | None = None  # the call id whose result the next `act` receives
        self.answer: str | None = None
        self.model_turns: list[dict[str, Any]] = []
        self.model_seconds: list[float] = []
        self.stop_reason: str | None = None
        self.stop_detail: str | None = None
        headers = {"Authorization": f"Bearer {agent.api_key}"} if agent.api_key else {}
        self.http = httpx.AsyncClient(
            transport=agent.transport, timeout=agent.timeout, headers=headers
        )

    @property
    def malformed_calls(self) -> int:
        """Tool calls of the model that were rejected before reaching the environment."""
        return sum(len(t["rejected"]) for t in self.model_turns)

    async def act(self, result: StepResult[Observation]) -> AgentAction:
        if len(self.messages) == 1:
            self.messages.append({"role": "user", "content": self._opening(result.observation)})
        elif self.pending is not None:
            self.messages.append(
                {
                    "role": "tool",
                    "tool_call_id": self.pending,
                    "content": tool_content(result.observation),
                }
            )
            self.pending = None
        malformed = 0
        while not self.queue:
            message, usage, finish = await self._complete()
            reply = assistant_message(message, turn=len(self.model_turns))
            self.messages.append(reply)
            calls = reply.get("tool_calls", [])
            rejected = self._accept(calls)
            self._record(reply, calls, rejected, usage, finish)
            if not calls:
                self.answer = reply["content"]
                return None
            if len(rejected) == len(calls):
                malformed += 1
                if malformed >= self.agent.max_malformed:
                    self.stop_reason = "malformed"
                    self.stop_detail = (
                        f"{malformed} model answers in a row had only malformed tool calls; "
                        f"last: {rejected[-1]['problem']}"
                    )
                    return None
        call_id, tool, arguments = self.queue.pop(0)
        self.pending = call_id
        return {"type": "call_tool", "tool_name": tool, "arguments": arguments}

    def _opening(self, obs: Observation) -> str:
        data = obs.model_dump(mode="json", exclude={"done", "reward"}, exclude_defaults=True)
        text = self.spec.prompt or str(obs.metadata.get("prompt", "")) or "Complete the task."
        return f"{text}\n\nInitial observation:\n{json.dumps(data)}" if data else text

    def _accept(self, calls: list[dict[str, Any]]) -> list[dict[str, str]]:
        """Queue the well-formed calls; answer the malformed ones (returned with the reason)."""
        rejected: list[dict[str, str]] = []
        for call in calls:
            name = call["function"]["name"]
            problem, arguments = parse_arguments(call["function"]["arguments"])
            if name not in self.names:
                problem = f"unknown function {name!r}; available: {', '.join(sorted(self.names))}"
            if problem is None:
                self.queue.append((call["id"], self.names[name], arguments))
                continue
            rejected.append({"id": call["id"], "name": name, "problem": problem})
            content = json.dumps({"error": {"error_type": "malformed_call", "message": problem}})
            self.messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
        return rejected

    def _record(
        self,
        reply: dict[str, Any],
        calls: list[dict[str, Any]],
        rejected: list[dict[str, str]],
        usage: Any,
        finish: Any,
    ) -> None:
        self.model_turns.append(
            {
                "turn": len(self.model_turns),
                "finish_reason": finish if isinstance(finish, str) else None,
                "content": reply["content"][:_TEXT_LIMIT],
                "tool_calls": [
                    {
                        "id": c["id"],
                        "name": c["function"]["name"],
                        "arguments": c["function"]["arguments"][:_TEXT_LIMIT],
                    }
                    for c in calls
                ],
                "rejected": rejected,
                "usage": {
                    k: v
                    for k, v in (usage if isinstance(usage, dict) else {}).items()
                    if k in ("prompt_tokens", "completion_tokens", "total_tokens")
                    and isinstance(v, int)
                },
            }
        )

    async def _complete(self) -> tuple[dict[str, Any], Any, Any]:
        agent = self.agent
        body: dict[str, Any] = {"model": agent.model, "messages": self.messages, **agent.sampling}
        if self.tools:
            body |= {"tools": self.tools, "tool_choice": "auto"}
        t0 = time.monotonic()
        try:
            response = await self.http.post(agent.url, json=body)
        except httpx.TimeoutException:
            raise ModelError(
                f"model request to {agent.url} timed out after {agent.timeout:g} s "
                "(raise it with --model-timeout)"
            ) from None
        except httpx.HTTPError as exc:
            raise ModelError(
                f"model request to {agent.url} failed: {type(exc).__name__}: {exc}"
            ) from None
        finally:
            self.model_seconds.append(time.monotonic() - t0)
        if response.status_code != 200:
            raise ModelError(
                f"model endpoint answered HTTP {response.status_code}: {response.text[:300]}"
            )
        try:
            data = response.json()
            choice = data["choices"][0]
            message = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ModelError(f"not a chat completion: {response.text[:300]}") from None
        if not isinstance(message, dict):
            raise ModelError(f"not a chat completion message: {message!r}")
        return message, data.get("usage"), choice.get("finish_reason")

    async def aclose(self) -> None:
        await self.http.aclose()
