"""Serve a `ScriptedModel` behind a `CaptureProxy` on 127.0.0.1.

In a test::

    async with scripted_proxy(ScriptedModel([say("hello")])) as proxy: ...   # async
    with scripted_proxy_thread(ScriptedModel([say("hello")])) as proxy: ...  # sync

By hand (accepts any API key; plays "guess 50, then done" for every conversation)::

    python -m scripted_model.server --port 8123      # from the tests/ folder
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import AsyncGenerator, Generator
from typing import Any

from mcpgym.harness.capture import CaptureProxy
from scripted_model.script import ScriptedModel, call, say

MODELS = ["scripted", "claude-sonnet-4-5", "gpt-5", "gpt-5-codex"]
"""Model ids `GET /v1/models` lists (harnesses probe for their configured model)."""


@contextlib.asynccontextmanager
async def scripted_proxy(model: ScriptedModel, **options: Any) -> AsyncGenerator[CaptureProxy]:
    """A running `CaptureProxy(backend=model)` on the current event loop."""
    async with CaptureProxy(backend=model, models=MODELS, **options) as proxy:
        yield proxy


@contextlib.contextmanager
def scripted_proxy_thread(model: ScriptedModel, **options: Any) -> Generator[CaptureProxy]:
    """A running `CaptureProxy(backend=model)` in a background thread (for sync tests)."""
    with CaptureProxy(backend=model, models=MODELS, **options) as proxy:
        yield proxy


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve a scripted model behind a capture proxy.")
    parser.add_argument("--port", type=int, default=8123)
    args = parser.parse_args()
    model = ScriptedModel([call("guess", {"n": 50}), say("The number is 50.")])

    async def serve() -> None:
        proxy = CaptureProxy(backend=model, models=MODELS, accept_unknown_keys=True, port=args.port)
        async with proxy:
            print(f"scripted model on {proxy.base_url} (OpenAI: {proxy.openai_base_url})")
            await asyncio.Event().wait()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
