"""mcpgym.harness.capture: an LLM capture proxy between agent harnesses and a model.

The proxy speaks Anthropic Messages, OpenAI Chat Completions and OpenAI Responses (streamed and
not), routes each call by its per-episode API key, records it (`LLMCall`), and answers from an
in-process `Backend` or forwards to a real `Upstream`. See docs/capture.md.

Example::

    from mcpgym.harness.capture import CaptureProxy, Upstream

    async with CaptureProxy(upstream=Upstream("http://127.0.0.1:8000/v1", model="Qwen/Qwen3-8B",
                                              extra_body={"return_token_ids": True})) as proxy:
        key = proxy.new_episode_key()
        env = {"ANTHROPIC_BASE_URL": proxy.base_url, "ANTHROPIC_API_KEY": key}
        ...  # run the harness
        for call in proxy.calls(key):
            print(call.dialect, call.usage, call.duration_s)
"""

from mcpgym.harness.capture.backend import (
    DIALECTS,
    SSE,
    Backend,
    BackendError,
    Dialect,
    ModelRequest,
    Reply,
)
from mcpgym.harness.capture.conversation import Conversation, Message, Part, ToolView
from mcpgym.harness.capture.errors import error_body
from mcpgym.harness.capture.parsing import parse_request, parse_response
from mcpgym.harness.capture.proxy import CaptureProxy
from mcpgym.harness.capture.records import LLMCall, Usage, token_ids_of, usage_of
from mcpgym.harness.capture.segments import Segment, segment_call
from mcpgym.harness.capture.store import CallListener, CallStore, UnknownKeyError
from mcpgym.harness.capture.streams import Reassembler, SSEParser, reassembler_for
from mcpgym.harness.capture.upstream import Upstream

__all__ = [
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
