"""A one-shot `cli` harness that speaks OpenAI Chat Completions (run as a program).

It lists the environment's tools over MCP, asks the model once with them (the first tool
forced), runs the first tool call the model makes (if any) and prints the model's text as the
turn's response. Its model calls go wherever `MCPGYM_OPENAI_URL` points (the capture
proxy, in an eval).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

import httpx


async def main(message: str) -> None:
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    token = os.environ.get("MCPGYM_MCP_TOKEN", "")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(os.environ["MCPGYM_MCP_URL"], http_client=http)) as mcp,
    ):
        listing = await mcp.list_tools()
        tools = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description or t.name,
                    "parameters": t.input_schema,
                },
            }
            for t in listing.tools
        ]
        body = {
            "model": os.environ.get("MCPGYM_MODEL", "m"),
            "messages": [{"role": "user", "content": message}],
            "tools": tools,
            # forced: a 135M model often answers "auto" with nothing at all
            "tool_choice": {"type": "function", "function": {"name": tools[0]["function"]["name"]}},
            "temperature": 0.0,
            "max_tokens": 96,
        }
        async with httpx.AsyncClient(timeout=300.0) as client:
            response = await client.post(
                os.environ["MCPGYM_OPENAI_URL"] + "/chat/completions",
                headers={"Authorization": f"Bearer {os.environ['MCPGYM_MODEL_KEY']}"},
                json=body,
            )
        response.raise_for_status()
        reply = response.json()["choices"][0]["message"]
        for call in (reply.get("tool_calls") or [])[:1]:
            name = call["function"]["name"]
            try:
                arguments = json.loads(call["function"]["arguments"] or "{}")
            except ValueError:
                arguments = {}
            print(json.dumps({"type": "tool_call", "name": name, "arguments": arguments}))
            result = await mcp.call_tool(name, arguments if isinstance(arguments, dict) else {})
            text = " ".join(getattr(c, "text", "") for c in result.content)
            print(json.dumps({"type": "tool_result", "name": name, "text": text}))
        print(reply.get("content") or "(no text)")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
