"""A tiny NDJSON harness for the `cli` adapter tests (run as a program).

Each stdin line `{"type": "user", "message": M}` is one turn; M is a command:

    call TOOL {json args}   call a tool of the environment over MCP (HTTP, or stdio when
                            MCPGYM_MCP_COMMAND is set), report tool_call / tool_result
    hang                    never answer (a turn timeout)
    die                     write "fatal: ..." to stderr and exit 3 (a crash)
    spawn                   start two `sleep` children, one in a session of its own
    done                    end the turn with done=true
    anything else           echo it

Every turn_complete response ends with " | history=<every message so far>" (context kept).
With `--one-shot MESSAGE TURN` it plays one turn and prints the response as plain text.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from typing import Any


def emit(event: dict[str, Any]) -> None:
    print(json.dumps(event), flush=True)


async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    command = os.environ.get("MCPGYM_MCP_COMMAND")
    if command:
        argv = json.loads(command)
        env = dict(os.environ)
        server = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
        client = Client(stdio_client(server))  # a transport, as every mcp 2.x `Client` takes
    else:
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        token = os.environ["MCPGYM_MCP_TOKEN"]
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        client = Client(streamable_http_client(os.environ["MCPGYM_MCP_URL"], http_client=http))
    async with client:
        result = await client.call_tool(name, arguments)
    if result.structured_content is not None:
        return result.structured_content
    return "\n".join(getattr(block, "text", "") for block in result.content)


def play(message: str, history: list[str]) -> tuple[str, bool]:
    command, _, rest = message.partition(" ")
    if command == "call":
        name, _, args = rest.partition(" ")
        arguments = json.loads(args or "{}")
        emit({"type": "tool_call", "id": f"c{len(history)}", "name": name, "arguments": arguments})
        result = asyncio.run(call_tool(name, arguments))
        emit({"type": "tool_result", "id": f"c{len(history)}", "name": name, "content": result})
        return f"{name} -> {json.dumps(result)}", False
    if command == "hang":
        print("hanging on purpose", file=sys.stderr, flush=True)
        threading.Event().wait()
    if command == "die":
        print("fatal: the agent gave up on purpose", file=sys.stderr, flush=True)
        raise SystemExit(3)
    if command == "spawn":
        a = subprocess.Popen(["sleep", "300"])
        b = subprocess.Popen(["sleep", "300"], start_new_session=True)
        return f"spawned {a.pid} {b.pid}", False
    if command == "done":
        return "all done", True
    return f"echo: {message}", False


def main() -> int:
    if sys.argv[1:2] == ["--one-shot"]:
        message, turn = sys.argv[2], sys.argv[3]
        response, _ = play(message, [message])
        print(f"one-shot turn {turn}: {response}")
        return 0
    print(f"ndjson agent ready, pid {os.getpid()}", file=sys.stderr, flush=True)
    history: list[str] = []
    for line in sys.stdin:
        message = json.loads(line)["message"]
        history.append(message)
        response, done = play(message, history)
        emit({"type": "text", "text": response})
        response += " | history=" + json.dumps(history)
        emit({"type": "turn_complete", "response": response, "done": done})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
