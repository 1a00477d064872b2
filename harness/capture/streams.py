"""Server-sent events: an incremental parser and, per dialect, a reassembler that folds a streamed
answer back into the body the same call would have returned without streaming.

The proxy feeds every event it passes on (from a backend or from the upstream's raw bytes) to a
`Reassembler`; the recorded `LLMCall.response` is `reassembler.result()`, so a streamed call and
a non-streamed one are recorded in the same shape.

Example:
    >>> parser = SSEParser()
    >>> parser.feed(b'data: {"a": 1}\\n\\nevent: x\\nda') + parser.feed(b'ta: [DONE]\\n\\n')
    [SSE(event=None, data={'a': 1}), SSE(event='x', data='[DONE]')]
"""

from __future__ import annotations

import json
from typing import Any

from mcpgym.harness.capture.backend import SSE, Dialect

__all__ = ["Reassembler", "SSEParser", "reassembler_for"]


class SSEParser:
    """Incremental SSE decoder: `feed(bytes)` returns the events completed so far. JSON data is
    decoded; anything else (`[DONE]`) stays a string."""

    def __init__(self) -> None:
        self._buffer = ""
        self._decoder_tail = b""

    def feed(self, chunk: bytes) -> list[SSE]:
        data = self._decoder_tail + chunk
        try:
            text = data.decode()
            self._decoder_tail = b""
        except UnicodeDecodeError as exc:  # a multi-byte character split across chunks
            text = data[: exc.start].decode()
            self._decoder_tail = data[exc.start :]
        # normalise CRLF over the whole pending buffer: a "\r\n" may straddle two chunks
        self._buffer = (self._buffer + text).replace("\r\n", "\n")
        events: list[SSE] = []
        while "\n\n" in self._buffer:
            block, self._buffer = self._buffer.split("\n\n", 1)
            event = self._parse_block(block)
            if event is not None:
                events.append(event)
        return events

    @staticmethod
    def _parse_block(block: str) -> SSE | None:
        name: str | None = None
        lines: list[str] = []
        for line in block.split("\n"):
            if line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                name = value
            elif field == "data":
                lines.append(value)
        if not lines:
            return None
        raw = "\n".join(lines)
        try:
            return SSE(name, json.loads(raw))
        except ValueError:
            return SSE(name, raw)


class Reassembler:
    """Folds a dialect's stream events into the equivalent non-streamed response body."""

    def feed(self, event: SSE) -> None:
        raise NotImplementedError

    def result(self) -> dict[str, Any] | None:
        raise NotImplementedError

    error: dict[str, Any] | None = None


class AnthropicReassembler(Reassembler):
    def __init__(self) -> None:
        self.message: dict[str, Any] | None = None
        self._json: dict[int, str] = {}

    def feed(self, event: SSE) -> None:
        data = event.data if isinstance(event.data, dict) else {}
        kind = data.get("type", event.event)
        if kind == "message_start":
            self.message = dict(data.get("message") or {})
            self.message["content"] = list(self.message.get("content") or [])
        elif kind == "error":
            self.error = data
        elif self.message is None:
            return
        elif kind == "content_block_start":
            content: list[Any] = self.message["content"]
            index = data.get("index", len(content))
            content.extend({} for _ in range(index + 1 - len(content)))
            content[index] = dict(data.get("content_block") or {})
        elif kind == "content_block_delta":
            self._delta(data.get("index", 0), data.get("delta") or {})
        elif kind == "content_block_stop":
            index = data.get("index", 0)
            if index in self._json:
                raw = self._json.pop(index)
                try:
                    self.message["content"][index]["input"] = json.loads(raw) if raw else {}
                except ValueError:
                    self.message["content"][index]["input"] = raw
        elif kind == "message_delta":
            self.message.update(data.get("delta") or {})
            usage = dict(self.message.get("usage") or {})
            usage.update({k: v for k, v in (data.get("usage") or {}).items() if v is not None})
            self.message["usage"] = usage

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        assert self.message is not None
        block = self.message["content"][index]
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = block.get("text", "") + delta.get("text", "")
        elif kind == "input_json_delta":
            self._json[index] = self._json.get(index, "") + delta.get("partial_json", "")
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
        elif kind == "signature_delta":
            block["signature"] = block.get("signature", "") + delta.get("signature", "")
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(delta.get("citation"))

    def result(self) -> dict[str, Any] | None:
        return self.message


class ChatReassembler(Reassembler):
    def __init__(self) -> None:
        self.body: dict[str, Any] | None = None
        self._choices: dict[int, dict[str, Any]] = {}

    def feed(self, event: SSE) -> None:
        if not isinstance(event.data, dict):
            return  # [DONE]
        chunk: dict[str, Any] = event.data
        if "error" in chunk:
            self.error = chunk
            return
        if self.body is None:
            self.body = {k: v for k, v in chunk.items() if k not in ("choices", "object")}
            self.body["object"] = "chat.completion"
        for key in ("usage", "prompt_token_ids", "system_fingerprint"):
            if chunk.get(key) is not None:
                self.body[key] = chunk[key]
        for choice in chunk.get("choices") or []:
            self._choice(choice)

    def _choice(self, choice: dict[str, Any]) -> None:
        index = choice.get("index", 0)
        state = self._choices.setdefault(
            index,
            {
                "index": index,
                "message": {"role": "assistant", "content": None},
                "finish_reason": None,
            },
        )
        msg = state["message"]
        delta = choice.get("delta") or {}
        for key in ("content", "reasoning_content", "reasoning", "refusal"):
            if isinstance(delta.get(key), str):
                msg[key] = (msg.get(key) or "") + delta[key]
        for call in delta.get("tool_calls") or []:
            calls = msg.setdefault("tool_calls", [])
            i = call.get("index", len(calls))
            calls.extend(
                {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
                for _ in range(i + 1 - len(calls))
            )
            target = calls[i]
            if call.get("id"):
                target["id"] = call["id"]
            fn = call.get("function") or {}
            target["function"]["name"] += fn.get("name") or ""
            target["function"]["arguments"] += fn.get("arguments") or ""
        if choice.get("finish_reason"):
            state["finish_reason"] = choice["finish_reason"]
        if choice.get("token_ids"):
            state.setdefault("token_ids", []).extend(choice["token_ids"])
        logprobs = (choice.get("logprobs") or {}).get("content")
        if logprobs:
            state.setdefault("logprobs", {"content": []})["content"].extend(logprobs)

    def result(self) -> dict[str, Any] | None:
        if self.body is None:
            return None
        return self.body | {"choices": [self._choices[i] for i in sorted(self._choices)]}


class ResponsesReassembler(Reassembler):
    def __init__(self) -> None:
        self.response: dict[str, Any] | None = None
        self._items: dict[int, dict[str, Any]] = {}

    def feed(self, event: SSE) -> None:
        data = event.data if isinstance(event.data, dict) else {}
        kind = data.get("type", event.event)
        if kind in ("response.created", "response.in_progress") and self.response is None:
            self.response = dict(data.get("response") or {})
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            self.response = dict(data.get("response") or {})
            if kind == "response.failed":
                self.error = self.response.get("error") or data
        elif kind == "response.output_item.done":
            self._items[data.get("output_index", len(self._items))] = data.get("item") or {}
        elif kind == "error":
            self.error = data

    def result(self) -> dict[str, Any] | None:
        if self.response is None:
            return None
        if not self.response.get("output") and self._items:
            # some servers send an empty `output` in response.completed; rebuild it from the items
            self.response["output"] = [self._items[i] for i in sorted(self._items)]
        return self.response


def reassembler_for(dialect: Dialect) -> Reassembler:
    """A fresh reassembler for one streamed call in `dialect`."""
    if dialect == "anthropic":
        return AnthropicReassembler()
    if dialect == "openai-chat":
        return ChatReassembler()
    return ResponsesReassembler()
