"""`LLMAgent`: a tool-calling loop against any OpenAI-compatible chat-completions endpoint
(vLLM, Ollama, llama.cpp, an API).

Each episode is one conversation: a system message, the spec's prompt (with the reset
observation when it carries anything), then the model's tool calls, each answered with a `tool`
message holding the tool's result or structured error. The environment's tools become OpenAI
function tools (names outside `[A-Za-z0-9_-]{1,64}` are mapped and mapped back).

A malformed call from the model — arguments that are not a JSON object, a function that does
not exist — is answered with an error message in the conversation instead of reaching the
environment, and the model is asked again (`max_malformed` times in a row at most, then the
episode stops). Several tool calls in one answer are played one per step, in order. A plain text
answer ends the episode (`agent_stopped`); so does the environment's `done`.

Example:
    >>> agent = LLMAgent("http://127.0.0.1:8000/v1", "qwen3")
    >>> openai_tools([ToolInfo(name="calendar.find", input_schema={"type": "object"})])[0][
    ...     "function"]["name"]
    'calendar_find'
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from typing import Any

import httpx

from mcpgym.harness.episodes import AgentAction, EpisodeSpec
from mcpgym.types import CallToolObservation, Observation, StepResult, ToolInfo

__all__ = ["DEFAULT_SYSTEM_PROMPT", "LLMAgent", "ModelError", "openai_tools"]

DEFAULT_SYSTEM_PROMPT = (
    "You are an agent operating tools to complete a task. Call tools to act; read each result. "
    "When the task is complete, answer in plain text without calling a tool."
)

_VALID_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class ModelError(RuntimeError):
    """The model endpoint failed (HTTP error, timeout, not a chat completion)."""


def _function_name(name: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:60] or "tool"
    candidate, i = base, 1
    while candidate in taken:
        candidate, i = f"{base}_{i}", i + 1
    return candidate


def openai_tools(tools: Sequence[ToolInfo]) -> list[dict[str, Any]]:
    """The tools as OpenAI `{"type": "function", "function": {...}}` entries (same order).

    Valid names are kept; others are made valid without colliding with any kept name.
    """
    taken = {t.name for t in tools if _VALID_NAME.match(t.name)}
    out: list[dict[str, Any]] = []
    for tool in tools:
        if _VALID_NAME.match(tool.name):
            name = tool.name
        else:
            name = _function_name(tool.name, taken)
            taken.add(name)
        function = {
            "name": name,
            "description": tool.description or tool.name,
            "parameters": tool.input_schema or {"type": "object", "properties": {}},
        }
        out.append({"type": "function", "function": function})
    return out


class LLMAgent:
    """An agent backed by a chat-completions model with tool calling.

    Args:
        model_url: the endpoint's base URL, e.g. `http://127.0.0.1:8000/v1` (or the full
            `.../chat/completions` URL).
        model: the model name sent in each request.
        api_key: bearer token; default `$OPENAI_API_KEY` (none when unset).
        temperature / max_tokens: sampling options.
        timeout: seconds for one model request.
        max_malformed: consecutive malformed answers tolerated before the episode stops.
        transport: an `httpx.AsyncBaseTransport` (for tests).
    """

    def __init__(
        self,
        model_url: str,
        model: str,
        *,
        api_key: str | None = None,
        system: str = DEFAULT_SYSTEM_PROMPT,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        timeout: float = 120.0,
        max_malformed: int = 3,
        transport: httpx.AsyncBaseTransport | None = None,
        name: str = "llm",
    ) -> None:
        url = model_url.rstrip("/")
        self.url = url if url.endswith("/chat/completions") else f"{url}/chat/completions"
        self.model, self.system, self.name = model, system, name
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.temperature, self.max_tokens, self.timeout = temperature, max_tokens, timeout
        self.max_malformed, self.transport = max_malformed, transport

    def start(self, spec: EpisodeSpec, tools: list[ToolInfo]) -> _LLMEpisode:
        return _LLMEpisode(self, spec, tools)


class _LLMEpisode:
    def __init__(self, agent: LLMAgent, spec: EpisodeSpec, tools: list[ToolInfo]) -> None:
        self.agent, self.spec = agent, spec
        self.tools = openai_tools(tools)
        self.names = {
            t["function"]["name"]: tool.name for t, tool in zip(self.tools, tools, strict=True)
        }
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": agent.system}]
        self.queue: list[tuple[str, str, dict[str, Any]]] = []  # (call id, tool, arguments)
        self.pending: str | None = None  # the call id whose result the next `act` receives
        self.answer: str | None = None
        headers = {"Authorization": f"Bearer {agent.api_key}"} if agent.api_key else {}
        self.http = httpx.AsyncClient(
            transport=agent.transport, timeout=agent.timeout, headers=headers
        )

    async def act(self, result: StepResult[Observation]) -> AgentAction:
        if len(self.messages) == 1:
            self.messages.append({"role": "user", "content": self._opening(result.observation)})
        elif self.pending is not None:
            self.messages.append(
                {
                    "role": "tool",
                    "tool_call_id": self.pending,
                    "content": _render(result.observation),
                }
            )
            self.pending = None
        malformed = 0
        while not self.queue:
            message = await self._complete()
            self.messages.append(_assistant(message))
            calls = message.get("tool_calls") or []
            if not calls:
                self.answer = message.get("content") or ""
                return None
            bad = self._accept(calls)
            if bad == len(calls):
                malformed += 1
                if malformed >= self.agent.max_malformed:
                    return None
        call_id, tool, arguments = self.queue.pop(0)
        self.pending = call_id
        return {"type": "call_tool", "tool_name": tool, "arguments": arguments}

    def _opening(self, obs: Observation) -> str:
        data = obs.model_dump(mode="json", exclude={"done", "reward"}, exclude_defaults=True)
        text = self.spec.prompt or str(obs.metadata.get("prompt", "")) or "Complete the task."
        return f"{text}\n\nInitial observation:\n{json.dumps(data)}" if data else text

    def _accept(self, calls: list[dict[str, Any]]) -> int:
        """Queue the well-formed calls; answer the malformed ones. Returns how many were bad."""
        bad = 0
        for i, call in enumerate(calls):
            call_id = str(call.get("id") or f"call_{len(self.messages)}_{i}")
            function = call.get("function") or {}
            name = str(function.get("name", ""))
            problem, arguments = _parse_arguments(function.get("arguments"))
            if name not in self.names:
                problem = f"unknown function {name!r}; available: {', '.join(sorted(self.names))}"
            if problem is not None:
                bad += 1
                content = json.dumps(
                    {"error": {"error_type": "malformed_call", "message": problem}}
                )
                self.messages.append({"role": "tool", "tool_call_id": call_id, "content": content})
            else:
                self.queue.append((call_id, self.names[name], arguments))
        return bad

    async def _complete(self) -> dict[str, Any]:
        agent = self.agent
        body: dict[str, Any] = {
            "model": agent.model,
            "messages": self.messages,
            "temperature": agent.temperature,
        }
        if self.tools:
            body |= {"tools": self.tools, "tool_choice": "auto"}
        if agent.max_tokens is not None:
            body["max_tokens"] = agent.max_tokens
        try:
            response = await self.http.post(agent.url, json=body)
        except httpx.HTTPError as exc:
            raise ModelError(
                f"model request to {agent.url} failed: {type(exc).__name__}: {exc}"
            ) from None
        if response.status_code != 200:
            raise ModelError(
                f"model endpoint answered HTTP {response.status_code}: {response.text[:300]}"
            )
        try:
            message = response.json()["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ModelError(f"not a chat completion: {response.text[:300]}") from None
        if not isinstance(message, dict):
            raise ModelError(f"not a chat completion message: {message!r}")
        return message

    async def aclose(self) -> None:
        await self.http.aclose()


def _parse_arguments(raw: Any) -> tuple[str | None, dict[str, Any]]:
    if raw is None or raw == "":
        return None, {}
    if isinstance(raw, dict):
        return None, raw
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError as exc:
        return f"arguments are not valid JSON ({exc}): {str(raw)[:200]}", {}
    if not isinstance(value, dict):
        return f"arguments must be a JSON object, got {type(value).__name__}", {}
    return None, value


def _assistant(message: dict[str, Any]) -> dict[str, Any]:
    """The assistant message as it goes back into the conversation."""
    out: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        out["tool_calls"] = message["tool_calls"]
    return out


def _render(obs: Observation) -> str:
    """A tool message's content: the result, or `{"error": {...}}`."""
    if isinstance(obs, CallToolObservation):
        if obs.error is not None:
            return json.dumps({"error": obs.error.model_dump(mode="json")})
        result = obs.result
        return result if isinstance(result, str) else json.dumps(result)
    return json.dumps(obs.model_dump(mode="json", exclude={"reward"}))
